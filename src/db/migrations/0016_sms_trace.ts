// The trace an SMS belongs to (DESIGN section 11): the W3C `traceparent` of the webhook request
// that stored it, so parse_loop, order_match_loop and the wallet call continue that trace. Null
// when traces are off, and for SMS that came another way (chat-bot).
export default [
  `ALTER TABLE recon.shooter_sms ADD COLUMN trace_parent text`
]
