// What the services' SQL shares about `recon.shooter_sms`: its record's columns and the channel
// on which writes the worker must see at once are announced.
import { amountText } from "./Codecs.ts"

/** NOTIFY channel: a write the worker must see at once (payload: the table's name). */
export const CHANGES_CHANNEL = "recon_changes"

/** The columns of an SMS record (DESIGN section 5), as SmsRow decodes them. */
export const smsColumns = `id, device_id, sender, body, received_at, status, bank, payer_name, ${amountText("amount")} AS amount, deposit_id, created_at`
