import { Data, Effect, Schema } from "effect"
import type { Unavailable } from "@accord/domain"
import { queryRows, type SqlExecutor } from "./sql-executor.js"

/** One step of the schema, applied once, in order of `version`, inside the transaction that records it. */
export interface Migration {
  readonly version: number
  readonly name: string
  readonly statements: ReadonlyArray<string>
}

/**
 * The schema's history. Append only: an applied migration is never edited, a change is a new version.
 * Timestamps are `timestamptz(3)`, the precision of a JS Date, so what is written is exactly what is read back.
 * Ids compared or ordered by the API use `COLLATE "C"` (code-point order, whatever the database's locale).
 */
export const migrations: ReadonlyArray<Migration> = [
  {
    version: 1,
    name: "initial tables",
    statements: [
      `CREATE TABLE plan_entries (
        email_key text COLLATE "C" PRIMARY KEY,
        email text NOT NULL,
        password_hash text NOT NULL,
        created_at timestamptz(3) NOT NULL
      )`,
      `CREATE TABLE preferences (
        id serial PRIMARY KEY,
        user_id text COLLATE "C" NOT NULL UNIQUE,
        language text NOT NULL,
        timezone integer NOT NULL,
        mfa_enabled boolean NOT NULL,
        created_at timestamptz(3) NOT NULL,
        updated_at timestamptz(3) NOT NULL
      )`,
      `CREATE TABLE payment_methods (
        id text COLLATE "C" PRIMARY KEY,
        user_id text COLLATE "C" NOT NULL,
        is_default boolean NOT NULL DEFAULT false,
        created_at timestamptz(3) NOT NULL,
        updated_at timestamptz(3) NOT NULL
      )`,
      `CREATE INDEX payment_methods_user_idx ON payment_methods (user_id, id)`,
      // The invariant "at most one default per user" is the database's to keep, not only the code's.
      `CREATE UNIQUE INDEX payment_methods_one_default_per_user ON payment_methods (user_id) WHERE is_default`,
      `CREATE TABLE credentials (
        token_digest text COLLATE "C" PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('user', 'client')),
        principal_id text COLLATE "C" NOT NULL
      )`
    ]
  },
  {
    version: 2,
    name: "set-default payment method in one statement",
    statements: [
      // The whole of setDefault in one round trip: called as a single statement, it runs in that statement's implicit
      // transaction, so the per-user lock is held only for the time the database spends on it, never across network
      // round trips. The lock key is the one every other writer of a user's defaults takes (the seed, and earlier
      // versions of this code): keep them equal. Each statement of a volatile function reads with a fresh snapshot,
      // so what it reads after taking the lock includes everything the previous holder committed. Returns the row,
      // or no row when the method does not exist or belongs to another user.
      // `SET search_path FROM CURRENT` pins the schema the function was created in (the store's), whatever the
      // caller's search_path.
      `CREATE FUNCTION accord_set_default_payment_method(p_user_id text, p_id text, p_now timestamptz)
      RETURNS SETOF payment_methods
      LANGUAGE plpgsql
      SET search_path FROM CURRENT
      AS $$
      DECLARE
        target payment_methods;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('accord.payment_methods'), hashtext(p_user_id));
        SELECT * INTO target FROM payment_methods WHERE id = p_id AND user_id = p_user_id;
        IF NOT FOUND THEN
          RETURN;
        END IF;
        IF target.is_default THEN
          RETURN NEXT target;
          RETURN;
        END IF;
        -- Unset first: at no point does the partial unique index see two defaults.
        UPDATE payment_methods SET is_default = false, updated_at = p_now WHERE user_id = p_user_id AND is_default;
        RETURN QUERY UPDATE payment_methods SET is_default = true, updated_at = p_now WHERE id = p_id RETURNING *;
      END
      $$`
    ]
  },
  {
    version: 3,
    name: "set-default never moves updated_at backwards",
    statements: [
      // The caller's instant is taken before the per-user lock, so a call that waited for it may carry an instant
      // earlier than what the previous holder wrote: the stored updated_at is kept then (docs/api.md, "Precise rules").
      `CREATE OR REPLACE FUNCTION accord_set_default_payment_method(p_user_id text, p_id text, p_now timestamptz)
      RETURNS SETOF payment_methods
      LANGUAGE plpgsql
      SET search_path FROM CURRENT
      AS $$
      DECLARE
        target payment_methods;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('accord.payment_methods'), hashtext(p_user_id));
        SELECT * INTO target FROM payment_methods WHERE id = p_id AND user_id = p_user_id;
        IF NOT FOUND THEN
          RETURN;
        END IF;
        IF target.is_default THEN
          RETURN NEXT target;
          RETURN;
        END IF;
        -- Unset first: at no point does the partial unique index see two defaults.
        UPDATE payment_methods SET is_default = false, updated_at = GREATEST(p_now, updated_at)
          WHERE user_id = p_user_id AND is_default;
        RETURN QUERY UPDATE payment_methods SET is_default = true, updated_at = GREATEST(p_now, updated_at)
          WHERE id = p_id RETURNING *;
      END
      $$`
    ]
  },
  {
    version: 4,
    name: "set-default with a precondition in one statement",
    statements: [
      // A conditional set-default (If-Match) as a compare-and-set: the caller read the method and judged its
      // precondition; under the user's lock (the same key as every other writer of a user's defaults) this checks that
      // the method is still the version it read, and only then sets the default through the one set-default function
      // (which takes the lock again: a transaction holding it is granted it at once). No row: the method changed, or
      // is gone, since the read, and the caller reads again. Each statement sees what the previous lock holder
      // committed (a fresh snapshot per statement of a volatile function).
      `CREATE FUNCTION accord_set_default_payment_method_if(
        p_user_id text, p_id text, p_now timestamptz, p_was_default boolean, p_was_updated_at timestamptz)
      RETURNS SETOF payment_methods
      LANGUAGE plpgsql
      SET search_path FROM CURRENT
      AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('accord.payment_methods'), hashtext(p_user_id));
        PERFORM 1 FROM payment_methods
          WHERE id = p_id AND user_id = p_user_id AND is_default = p_was_default AND updated_at = p_was_updated_at;
        IF NOT FOUND THEN
          RETURN;
        END IF;
        RETURN QUERY SELECT * FROM accord_set_default_payment_method(p_user_id, p_id, p_now);
      END
      $$`
    ]
  },
  {
    version: 5,
    name: "events outbox",
    statements: [
      // docs/api.md, "Events": each subject's last sequence number, taken (and bumped) by the statement that records
      // an event, so a subject's events are numbered 1, 2, 3, ... without a gap or a repeat whatever runs at once.
      `CREATE TABLE event_subjects (
        subject text COLLATE "C" PRIMARY KEY,
        last_sequence bigint NOT NULL
      )`,
      // The outbox: every event, written in its change's own statement or transaction, kept after delivery (the feed).
      // `position` is the order events were recorded in; a deliverer claims pending rows with FOR UPDATE SKIP LOCKED
      // and holds them until `held_until`.
      `CREATE TABLE events (
        position bigserial UNIQUE,
        id uuid PRIMARY KEY,
        subject text COLLATE "C" NOT NULL,
        sequence bigint NOT NULL,
        owner text COLLATE "C",
        event jsonb NOT NULL,
        at timestamptz(3) NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        delivered_to text[] NOT NULL DEFAULT '{}',
        next_attempt_at timestamptz(3) NOT NULL DEFAULT '-infinity',
        held_until timestamptz(3) NOT NULL DEFAULT '-infinity',
        UNIQUE (subject, sequence)
      )`,
      "CREATE INDEX events_by_owner ON events (owner, sequence) WHERE owner IS NOT NULL",
      "CREATE INDEX events_pending ON events (position) WHERE status = 'pending'",
      // A set-default that moves the default as a compare-and-set, so that the statement calling it can write the
      // change's event (naming the previous default) in the same statement: the caller read the user's methods and
      // judged them; under the user's lock this checks that the target is still the version read and not the default,
      // and that the default is still the one read (NULL: none), and only then moves it. No row: something changed
      // since the read, and the caller reads again.
      `CREATE FUNCTION accord_move_default_payment_method_if(
        p_user_id text, p_id text, p_now timestamptz, p_was_updated_at timestamptz, p_previous_default text)
      RETURNS SETOF payment_methods
      LANGUAGE plpgsql
      SET search_path FROM CURRENT
      AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('accord.payment_methods'), hashtext(p_user_id));
        PERFORM 1 FROM payment_methods
          WHERE id = p_id AND user_id = p_user_id AND NOT is_default AND updated_at = p_was_updated_at;
        IF NOT FOUND THEN
          RETURN;
        END IF;
        IF (SELECT id FROM payment_methods WHERE user_id = p_user_id AND is_default) IS DISTINCT FROM p_previous_default
        THEN
          RETURN;
        END IF;
        RETURN QUERY SELECT * FROM accord_set_default_payment_method(p_user_id, p_id, p_now);
      END
      $$`
    ]
  },
  {
    version: 6,
    name: "events delivered per sink, and pruned",
    statements: [
      // docs/operations.md, "Events": each sink keeps its own progress, so one that is down or slow delays its own
      // deliveries only. A relay dispatches each new event once (`dispatched`), giving it one row here per sink; each
      // sink's deliverers claim its due rows with FOR UPDATE SKIP LOCKED and hold them until `due_at` (a claim moves
      // it to the claim's end). `since` starts the give-up clock: the event's change, or the replay that made the
      // delivery pending again. The columns of migration 5 that kept one progress for every sink (`attempts`,
      // `delivered_to`, `next_attempt_at`, `held_until`) are read once, by the dispatch of an event recorded before
      // this migration, and never written again.
      "ALTER TABLE events ADD COLUMN dispatched boolean NOT NULL DEFAULT false",
      `CREATE TABLE event_deliveries (
        position bigint NOT NULL REFERENCES events (position) ON DELETE CASCADE,
        sink text COLLATE "C" NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        since timestamptz(3) NOT NULL,
        due_at timestamptz(3) NOT NULL DEFAULT '-infinity',
        PRIMARY KEY (position, sink)
      )`,
      // A claim reads its sink's due rows in order, whatever the backlog of the rows not due yet.
      "CREATE INDEX event_deliveries_due ON event_deliveries (sink, due_at, position) WHERE status = 'pending'",
      "CREATE INDEX event_deliveries_failed ON event_deliveries (sink) WHERE status = 'failed'",
      "CREATE INDEX events_undispatched ON events (position) WHERE status = 'pending' AND NOT dispatched",
      // Retention removes the oldest delivered events, found by their instant.
      "CREATE INDEX events_delivered_at ON events (at) WHERE status = 'delivered'",
      "DROP INDEX events_pending",
      // A delivery's outcome and its event's status in one round trip. The event's row is locked first: two sinks
      // settling one event at once take turns, and each statement after the lock reads with a fresh snapshot (a
      // volatile function), so the second sees the first's row and the event's status counts both. A delivery that is
      // no longer pending (settled by another deliverer after a claim ran out) is left as it is.
      `CREATE FUNCTION accord_settle_delivery(
        p_event uuid, p_sink text, p_status text, p_attempts integer, p_due timestamptz)
      RETURNS void
      LANGUAGE plpgsql
      SET search_path FROM CURRENT
      AS $$
      DECLARE
        target bigint;
        outcome text;
      BEGIN
        SELECT position INTO target FROM events WHERE id = p_event FOR NO KEY UPDATE;
        IF NOT FOUND THEN
          RETURN;
        END IF;
        UPDATE event_deliveries SET status = p_status, attempts = p_attempts, due_at = COALESCE(p_due, '-infinity')
          WHERE position = target AND sink = p_sink AND status = 'pending';
        IF NOT FOUND THEN
          RETURN;
        END IF;
        SELECT CASE WHEN bool_or(status = 'pending') THEN 'pending'
                    WHEN bool_or(status = 'failed') THEN 'failed'
                    ELSE 'delivered' END
          INTO outcome FROM event_deliveries WHERE position = target;
        UPDATE events SET status = outcome WHERE position = target AND status <> outcome;
      END
      $$`
    ]
  }
]

/** A PostgreSQL schema name we accept: a plain identifier, so it needs no escaping beyond double quotes. */
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/

export class InvalidSchemaName extends Data.TaggedError("InvalidSchemaName")<{ readonly schema: string }> {
  override get message(): string {
    return `invalid PostgreSQL schema name ${JSON.stringify(this.schema)}: use 1 to 63 characters of [A-Za-z0-9_], not starting with a digit`
  }
}

/** The schema name as a quoted identifier, after checking it is a plain one. */
export const quoteSchema = (schema: string): Effect.Effect<string, InvalidSchemaName> =>
  SCHEMA_NAME.test(schema) ? Effect.succeed(`"${schema}"`) : Effect.fail(new InvalidSchemaName({ schema }))

const versionRows = queryRows(Schema.Struct({ version: Schema.Number }))

export interface MigrationReport {
  /** Versions this call applied, in order; empty when the database was already up to date. */
  readonly applied: ReadonlyArray<number>
  /** The highest version now in the database. */
  readonly current: number
}

/**
 * Brings the database (or `schema`, created when missing) up to the latest migration. Idempotent, and safe when
 * several processes start at once: everything runs in one transaction that first takes an advisory lock on the
 * schema, so the others wait, then find the versions recorded and apply nothing. The executor's connections must
 * already resolve unqualified names to `schema` (search_path).
 */
export const applyMigrations = (
  executor: SqlExecutor,
  schema?: string,
  all: ReadonlyArray<Migration> = migrations
): Effect.Effect<MigrationReport, Unavailable | InvalidSchemaName> =>
  Effect.gen(function* () {
    const quoted = schema === undefined ? undefined : yield* quoteSchema(schema)
    return yield* executor.transaction((tx) =>
      Effect.gen(function* () {
        yield* tx.query("SELECT pg_advisory_xact_lock(hashtext('accord.migrate'), hashtext($1))", [schema ?? ""])
        if (quoted !== undefined) yield* tx.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`)
        yield* tx.query(
          `CREATE TABLE IF NOT EXISTS accord_migrations (
            version integer PRIMARY KEY,
            name text NOT NULL,
            applied_at timestamptz(3) NOT NULL DEFAULT now()
          )`
        )
        const done = new Set(
          (yield* versionRows(tx, "SELECT version FROM accord_migrations")).map((row) => row.version)
        )
        const applied: Array<number> = []
        for (const migration of [...all].sort((a, b) => a.version - b.version)) {
          if (done.has(migration.version)) continue
          for (const statement of migration.statements) yield* tx.query(statement)
          yield* tx.query("INSERT INTO accord_migrations (version, name) VALUES ($1, $2)", [
            migration.version,
            migration.name
          ])
          applied.push(migration.version)
          done.add(migration.version)
        }
        return { applied, current: Math.max(0, ...done) }
      })
    )
  })
