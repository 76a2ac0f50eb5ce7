// admin_service (DESIGN section 7). Placeholder until issue 4 lands: the composition in
// src/Services.ts already wires it.
import { Layer } from "effect"
import type { AdminSettings } from "../config/AppConfig.ts"

export const AdminServerLive = (_settings: AdminSettings) => Layer.empty
