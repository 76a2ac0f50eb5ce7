// order_match_loop's pass: migration 0017's recon.match_pass with two costs removed, the edits below
// applied to its text (each must match once); otherwise the same function.
//
// - The candidate query asked "no SMS is being approved against this deposit" as NOT EXISTS over
//   the approving SMS. With statistics taken while few SMS were approving, PostgreSQL costs reading
//   every approving SMS the same as looking the deposit up, and may read them all
//   (shooter_sms_status_idx, filtered) for every candidate: under a burst (hundreds approving, and
//   the dead entries of those just approved) 0.2–8 ms per SMS instead of 0.03 (bench/pipeline.ts,
//   seen with pg_stat_statements and auto_explain, reproduced with a generic plan on stale
//   statistics). Asked of the SMS that name the deposit, through an index of deposit_id alone, the
//   only plan is a lookup of the deposit's id, whatever the statistics say.
// - The decisions were gathered by concatenating jsonb arrays, which copies the whole array per
//   SMS: 26 ms for a pass of 200 against 2 ms with arrays appended in place.
import pipeline from "./0017_pipeline.ts"

const EDITS: ReadonlyArray<readonly [before: string, after: string]> = [
  ["CREATE FUNCTION recon.match_pass(", "CREATE OR REPLACE FUNCTION recon.match_pass("],
  // The candidates: the SMS that name the deposit, through shooter_sms_deposit_idx.
  [
    "AND NOT EXISTS (SELECT 1 FROM recon.shooter_sms AS a WHERE a.status = 'approving' AND a.deposit_id = d.id);",
    "AND (SELECT bool_or(a.status = 'approving') FROM recon.shooter_sms AS a WHERE a.deposit_id = d.id) IS NOT TRUE;"
  ],
  // The decisions: arrays appended in place, turned into jsonb once.
  [
    "v_approving jsonb := '[]';\n      v_writes jsonb := '[]';\n      v_decided jsonb := '[]';",
    "v_approving jsonb[] := '{}';\n      v_writes jsonb[] := '{}';\n      v_decided jsonb[] := '{}';"
  ],
  [
    "v_decided := v_decided || jsonb_build_array(jsonb_build_array(v_sms.id, v_decision));\n        v_writes := v_writes || jsonb_build_object(",
    "v_decided := array_append(v_decided, jsonb_build_array(v_sms.id, v_decision));\n        v_writes := array_append(v_writes, jsonb_build_object("
  ],
  ["'player_count', v_player_count, 'decided_at', v_decided_at));", "'player_count', v_player_count, 'decided_at', v_decided_at)));"],
  [
    "v_approving := v_approving || jsonb_build_array(jsonb_build_array(v_sms.id, v_deposit, 0));",
    "v_approving := array_append(v_approving, jsonb_build_array(v_sms.id, v_deposit, 0));"
  ],
  [
    "FROM jsonb_to_recordset(v_writes) AS x(id bigint, status text, deposit_id bigint, detail jsonb)",
    "FROM unnest(v_writes) AS w(item), jsonb_to_record(w.item) AS x(id bigint, status text, deposit_id bigint, detail jsonb)"
  ],
  ["'decided', v_decided,\n        'approving', v_approving,", "'decided', to_jsonb(v_decided),\n        'approving', to_jsonb(v_approving),"]
]

const original = pipeline.find((statement) => statement.includes("CREATE FUNCTION recon.match_pass("))
const matchPass = EDITS.reduce((text, [before, after]) => {
  if (text.split(before).length !== 2) throw new Error(`migration 0020: recon.match_pass of migration 0017 is not the one it amends (${before.slice(0, 40)}…)`)
  return text.replace(before, after)
}, original ?? "")

export default [
  `CREATE INDEX shooter_sms_deposit_idx ON recon.shooter_sms (deposit_id) WHERE deposit_id IS NOT NULL`,
  matchPass
]
