// What the worker keeps beside the SMS: the SMS Gateway's own id of each phone (its export API
// asks for it), and an index for the per-device sync of sms_id_sync_loop.
export default [
  `ALTER TABLE recon.shooter_push ADD COLUMN remote_device_id text`,
  // The original an SMS is a duplicate of: looked up by duplicate_of when links are repaired.
  `CREATE INDEX shooter_sms_duplicate_of_idx ON recon.shooter_sms (duplicate_of) WHERE duplicate_of IS NOT NULL`
]
