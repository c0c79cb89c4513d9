import { Schema } from "effect"
import { Email, emailKey, PasswordHash, type PlanEntry } from "@accord/domain"

// A full disk, as PostgreSQL reports it (SQLSTATE 53100 disk_full; PGlite's words when a table cannot grow), raised by
// triggers so that the stores' handling of it is tested everywhere, without filling a disk (docs/SECURITY.md, item 36).

/**
 * Triggers in `schema` raising disk_full: on a plan entry whose email starts with "full", and on turning a user's MFA
 * on. `DROP FUNCTION ... CASCADE` of `accord_test_disk_full` removes them.
 */
export const diskFullTriggers = (schema = "public") => `
  CREATE FUNCTION "${schema}".accord_test_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'could not extend file "base/5/16385": No space left on device'
      USING ERRCODE = 'disk_full', HINT = 'Check free disk space.';
  END $$;
  CREATE TRIGGER disk_full BEFORE INSERT ON "${schema}".plan_entries
    FOR EACH ROW WHEN (NEW.email_key LIKE 'full%') EXECUTE FUNCTION "${schema}".accord_test_disk_full();
  CREATE TRIGGER disk_full BEFORE UPDATE ON "${schema}".preferences
    FOR EACH ROW WHEN (NEW.mfa_enabled) EXECUTE FUNCTION "${schema}".accord_test_disk_full();
`

/** Whether a failure's cause is PostgreSQL's disk_full. */
export const isDiskFull = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && "code" in cause && cause.code === "53100"

export const entryOf = (address: string): PlanEntry => {
  const email = Schema.decodeUnknownSync(Email)(address)
  return {
    email,
    emailKey: emailKey(email),
    passwordHash: PasswordHash.make("scrypt$x"),
    createdAt: new Date("2030-01-01T00:00:00.123Z")
  }
}
