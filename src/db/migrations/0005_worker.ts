// What the worker keeps beside the SMS: the SMS Gateway's own id of each phone (its export API
// asks for it), the sender in the whitelist's form, and the indexes the loops look up by.
export default [
  // normalizePhone(sender) at ingest, so phone_whitelist_loop compares exactly as the push endpoint did.
  `ALTER TABLE recon.shooter_sms ADD COLUMN sender_normalized text`,
  // The newest SMS of a device (silence, export windows, last_event_at).
  `CREATE INDEX shooter_sms_device_received_idx ON recon.shooter_sms (device_id, received_at DESC)`,
  `CREATE INDEX shooter_sms_need_check_idx ON recon.shooter_sms (sender_normalized) WHERE status = 'need_check'`,
  `ALTER TABLE recon.shooter_push ADD COLUMN remote_device_id text`,
  // The original an SMS is a duplicate of: looked up by duplicate_of when links are repaired.
  `CREATE INDEX shooter_sms_duplicate_of_idx ON recon.shooter_sms (duplicate_of) WHERE duplicate_of IS NOT NULL`
]
