// Every loop of the worker: adding one is a file in src/loops and a line here.
import { ChatbotPollLoop } from "./ChatbotPollLoop.ts"
import type { Loop } from "./Loop.ts"
import { MissingSmsSyncLoop } from "./MissingSmsSyncLoop.ts"
import { ParseLoop } from "./ParseLoop.ts"
import { PhoneWhitelistLoop } from "./PhoneWhitelistLoop.ts"
import { PushsvcListenerSupervisor } from "./PushsvcListenerSupervisor.ts"
import { SmsIdSyncLoop } from "./SmsIdSyncLoop.ts"

export const loops: ReadonlyArray<Loop> = [
  PushsvcListenerSupervisor,
  SmsIdSyncLoop,
  PhoneWhitelistLoop,
  MissingSmsSyncLoop,
  ChatbotPollLoop,
  ParseLoop
]
