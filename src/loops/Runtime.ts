// placeholder, being written
import { Layer } from "effect"
import type { WorkerSettings } from "../config/AppConfig.ts"
export const WorkerLive = (_settings: WorkerSettings) => Layer.empty
