// Every loop of the worker: adding one is a file in src/loops and a line here.
import { ChatbotPollLoop } from "./ChatbotPollLoop.ts"
import { MissingSmsSyncLoop } from "./MissingSmsSyncLoop.ts"
import { ParseLoop } from "./ParseLoop.ts"
import { OrderMatchLoop } from "./OrderMatchLoop.ts"
import { PhoneWhitelistLoop } from "./PhoneWhitelistLoop.ts"
import { PushsvcListenerSupervisor } from "./PushsvcListenerSupervisor.ts"
import { SmsIdSyncLoop } from "./SmsIdSyncLoop.ts"
import { WebhookDeliveryLoop } from "./WebhookDeliveryLoop.ts"

// Not annotated: each loop keeps the services it declares, and the worker must provide their union.
export const loops = [
  PushsvcListenerSupervisor,
  SmsIdSyncLoop,
  PhoneWhitelistLoop,
  MissingSmsSyncLoop,
  ChatbotPollLoop,
  ParseLoop,
  OrderMatchLoop,
  WebhookDeliveryLoop
]
