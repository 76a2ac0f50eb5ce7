// recon.template_version moves only when a statement changed a template row (issue 37). Migration
// 0017's statement-level trigger fired on every writing statement, rows or not: a refused
// `template/recharge/add` (INSERT … ON CONFLICT DO NOTHING that inserted nothing, answered 409) or
// a delete of an id that does not exist bumped the version, and every worker reloaded its
// templates for nothing. Still once per statement, now with the statement's transition table: the
// bump happens when it holds a row. PostgreSQL allows a transition table on a trigger of one event
// only, so one trigger per event; TRUNCATE has none and always bumps (it is never refused).
//
// Also: a deposit's review flag (task_status 6, set by order_match_loop on a pending deposit an SMS
// could not decide between) ends when the deposit stops being pending, whoever moves it: sms/resolve
// cleared it, but an approval by order_match_loop through wallet_service, `deposit agree` by hand or
// the expiry left it set, and the console counted a settled deposit as waiting for review. One
// trigger, so every path agrees; the flags left set so far are cleared once here.
export default [
  `DROP TRIGGER shooter_template_version ON recon.shooter_template_recharge`,
  `CREATE OR REPLACE FUNCTION recon.bump_template_version() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    IF TG_OP = 'TRUNCATE' OR EXISTS (SELECT 1 FROM changed_templates) THEN
      UPDATE recon.template_version SET version = version + 1;
      PERFORM pg_notify('recon_changes', 'shooter_template_recharge');
    END IF;
    RETURN NULL;
  END
  $fn$`,
  `CREATE TRIGGER shooter_template_version_insert AFTER INSERT ON recon.shooter_template_recharge
    REFERENCING NEW TABLE AS changed_templates FOR EACH STATEMENT EXECUTE FUNCTION recon.bump_template_version()`,
  `CREATE TRIGGER shooter_template_version_update AFTER UPDATE ON recon.shooter_template_recharge
    REFERENCING NEW TABLE AS changed_templates FOR EACH STATEMENT EXECUTE FUNCTION recon.bump_template_version()`,
  `CREATE TRIGGER shooter_template_version_delete AFTER DELETE ON recon.shooter_template_recharge
    REFERENCING OLD TABLE AS changed_templates FOR EACH STATEMENT EXECUTE FUNCTION recon.bump_template_version()`,
  `CREATE TRIGGER shooter_template_version_truncate AFTER TRUNCATE ON recon.shooter_template_recharge
    FOR EACH STATEMENT EXECUTE FUNCTION recon.bump_template_version()`
,
  `CREATE FUNCTION recon.deposit_review_ends() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    NEW.task_status := NULL;
    RETURN NEW;
  END
  $fn$`,
  `CREATE TRIGGER deposit_review_ends BEFORE UPDATE OF status ON recon.deposit
    FOR EACH ROW WHEN (NEW.status <> 'pending' AND NEW.task_status = 6) EXECUTE FUNCTION recon.deposit_review_ends()`,
  `UPDATE recon.deposit SET task_status = NULL WHERE task_status = 6 AND status <> 'pending'`
]
