// recon.template_version moves only when a statement changed a template row (issue 37). Migration
// 0017's statement-level trigger fired on every writing statement, rows or not: a refused
// `template/recharge/add` (INSERT … ON CONFLICT DO NOTHING that inserted nothing, answered 409) or
// a delete of an id that does not exist bumped the version, and every worker reloaded its
// templates for nothing. Still once per statement, now with the statement's transition table: the
// bump happens when it holds a row. PostgreSQL allows a transition table on a trigger of one event
// only, so one trigger per event; TRUNCATE has none and always bumps (it is never refused).
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
]
