import { Data, Effect, Schema } from "effect"
import type { Unavailable } from "@accord/domain"
import { holdsDatabase, type DataDirError } from "./data-dir.js"
import { makeEventStore } from "./events.js"
import { DEFAULT_QUERY_TIMEOUT_MS, makePgPool, openPglite } from "./layers.js"
import type { InvalidSchemaName } from "./migrations.js"
import { makePoolExecutor } from "./pg-executor.js"
import { queryRows } from "./sql-executor.js"

/** The first migration whose tables `replay-events` works on (per-sink deliveries). */
export const REPLAY_NEEDS_VERSION = 6

/** A command that must not create a schema was given one that does not exist (a misspelt name, most likely). */
export class SchemaMissing extends Data.TaggedError("SchemaMissing")<{ readonly schema: string | undefined }> {
  override get message(): string {
    return this.schema === undefined
      ? "the connection's schema (its search_path) does not exist; nothing was created"
      : `no schema named "${this.schema}" in this database; nothing was created (a misspelling? \`accord-migrate migrate\` creates one)`
  }
}

/** The schema exists but its tables are older than the command needs. */
export class SchemaBehind extends Data.TaggedError("SchemaBehind")<{
  readonly schema: string | undefined
  readonly version: number
}> {
  override get message(): string {
    const where = this.schema === undefined ? "the connection's schema" : `schema "${this.schema}"`
    return this.version === 0
      ? `${where} holds no Accord tables; nothing was changed (run \`accord-migrate migrate\`, or start the server, first)`
      : `${where} is at migration ${this.version}, this command needs ${REPLAY_NEEDS_VERSION}; nothing was changed (run \`accord-migrate migrate\` first)`
  }
}

/** A PGlite data directory that is missing or holds no database: never created by a command that only reads it. */
export class NoDatabaseInDataDir extends Data.TaggedError("NoDatabaseInDataDir")<{ readonly dataDir: string }> {
  override get message(): string {
    return `no database in ${this.dataDir}; nothing was created (a misspelling? the server's first start, or \`accord-migrate migrate --data-dir\`, creates one)`
  }
}

/** Where `replay-events` works: a PostgreSQL database (and schema), or a PGlite data directory. */
export type ReplayTarget =
  { readonly connectionString: string; readonly schema?: string } | { readonly dataDir: string }

export type ReplayError =
  Unavailable | InvalidSchemaName | SchemaMissing | SchemaBehind | NoDatabaseInDataDir | DataDirError

const nameRows = queryRows(Schema.Struct({ name: Schema.String }))
const presentRows = queryRows(Schema.Struct({ present: Schema.Boolean }))
const versionRows = queryRows(Schema.Struct({ version: Schema.Number }))

/**
 * `accord-migrate replay-events` (docs/operations.md, "Events"): every delivery given up pending again, due at `now`,
 * its attempts and give-up clock anew; how many events. It creates nothing: a missing schema or data directory, or
 * tables older than it needs, is refused. On PostgreSQL the running servers' relays deliver them; a PGlite directory is
 * one process's, so its server is stopped first (`DataDirInUse` otherwise) and delivers them once started again.
 */
export const replayFailedEvents = (target: ReplayTarget, now: Date): Effect.Effect<number, ReplayError> =>
  "dataDir" in target
    ? Effect.suspend((): Effect.Effect<number, ReplayError> =>
        holdsDatabase(target.dataDir)
          ? Effect.scoped(
              Effect.flatMap(openPglite({ dataDir: target.dataDir }), ({ executor }) =>
                makeEventStore(executor).replayFailed(now)
              )
            )
          : Effect.fail(new NoDatabaseInDataDir({ dataDir: target.dataDir }))
      )
    : Effect.scoped(
        Effect.gen(function* () {
          const pool = yield* makePgPool({ ...target, poolSize: 1 })
          const sql = makePoolExecutor(pool, { queryTimeoutMs: DEFAULT_QUERY_TIMEOUT_MS })
          const schema = target.schema
          const [found] = yield* nameRows(
            sql,
            "SELECT nspname AS name FROM pg_namespace WHERE nspname = coalesce($1, current_schema())",
            [schema ?? null]
          )
          if (found === undefined) return yield* new SchemaMissing({ schema })
          const [tables] = yield* presentRows(sql, "SELECT to_regclass('accord_migrations') IS NOT NULL AS present")
          const [reached] =
            tables?.present === true
              ? yield* versionRows(sql, "SELECT coalesce(max(version), 0) AS version FROM accord_migrations")
              : [{ version: 0 }]
          const version = reached?.version ?? 0
          if (version < REPLAY_NEEDS_VERSION) return yield* new SchemaBehind({ schema, version })
          return yield* makeEventStore(sql).replayFailed(now)
        })
      )
