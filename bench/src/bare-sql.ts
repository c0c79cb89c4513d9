import { timingSafeEqual } from "node:crypto"
import Fastify from "fastify"
import type { AddressInfo } from "node:net"
import {
  digest,
  isBareResponse,
  ok,
  readPreferencesChange,
  TOKEN,
  tokenOf,
  unauthorized,
  type BareResponse
} from "./bare-domain.js"
import type { BareServer } from "./bare-servers.js"
import { BODY_LIMIT } from "./bare-servers.js"
import { LANGUAGE_PATH, userId, userToken } from "./workload.js"

/**
 * The SQL baselines (issue 29): bare Fastify doing PUT language by hand on PostgreSQL (node-postgres, a pool of 10,
 * as the CLI's) or PGlite, as a careful developer would write it with the driver's documented API: the token's digest
 * looked up (`SELECT`), the same checks, then one `INSERT ... ON CONFLICT DO UPDATE` that merges the fields and moves
 * `updated_at` only on a change. Two statements a request, no cache, unnamed statements (`query(text, values)`).
 */

/** What the baseline asks of a driver: `pg.Pool#query` and `PGlite#query` both fit. */
export interface SqlQuery {
  readonly query: (text: string, values: Array<unknown>) => Promise<{ readonly rows: ReadonlyArray<unknown> }>
}

/** The tables Accord's migration 1 makes for these two, in a schema of the baseline's own. */
export const BARE_SQL_SCHEMA = `
  CREATE TABLE IF NOT EXISTS credentials (
    token_digest text COLLATE "C" PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('user', 'client')),
    principal_id text COLLATE "C" NOT NULL
  );
  CREATE TABLE IF NOT EXISTS preferences (
    id serial PRIMARY KEY,
    user_id text COLLATE "C" NOT NULL UNIQUE,
    language text NOT NULL,
    timezone integer NOT NULL,
    mfa_enabled boolean NOT NULL,
    created_at timestamptz(3) NOT NULL,
    updated_at timestamptz(3) NOT NULL
  );`

/** The bench's users' credentials, as digests (run once, after `BARE_SQL_SCHEMA`). */
export const seedBareSql = async (db: SqlQuery, users: number): Promise<void> => {
  for (let index = 0; index < users; index += 500) {
    const batch = Array.from({ length: Math.min(500, users - index) }, (_, offset) => index + offset)
    await db.query(
      `INSERT INTO credentials (token_digest, kind, principal_id)
       SELECT digest, 'user', principal FROM unnest($1::text[], $2::text[]) AS seed(digest, principal)
       ON CONFLICT DO NOTHING`,
      [batch.map((user) => digest(userToken(user))), batch.map((user) => userId(user))]
    )
  }
}

const MERGE = `INSERT INTO preferences AS p (user_id, language, timezone, mfa_enabled, created_at, updated_at)
  VALUES ($1, COALESCE($2, 'en'), COALESCE($3, 0), COALESCE($4, false), $5, $5)
  ON CONFLICT (user_id) DO UPDATE SET
    language = COALESCE($2, p.language),
    timezone = COALESCE($3, p.timezone),
    mfa_enabled = COALESCE($4, p.mfa_enabled),
    updated_at = CASE
      WHEN (COALESCE($2, p.language), COALESCE($3, p.timezone), COALESCE($4, p.mfa_enabled))
        IS DISTINCT FROM (p.language, p.timezone, p.mfa_enabled)
      THEN GREATEST($5, p.updated_at) ELSE p.updated_at END
  RETURNING id, language, timezone, mfa_enabled, created_at, updated_at`

interface PreferencesRow {
  readonly id: number
  readonly language: string
  readonly timezone: number
  readonly mfa_enabled: boolean
  readonly created_at: Date
  readonly updated_at: Date
}

const authenticateSql = async (db: SqlQuery, header: string | undefined): Promise<string | undefined> => {
  const token = tokenOf(header)
  if (token === undefined || !TOKEN.test(token)) return undefined
  const hex = digest(token)
  const { rows } = await db.query("SELECT token_digest, principal_id FROM credentials WHERE token_digest = $1", [hex])
  const row = rows[0] as { token_digest: string; principal_id: string } | undefined
  if (row === undefined) return undefined
  return timingSafeEqual(Buffer.from(row.token_digest, "hex"), Buffer.from(hex, "hex")) ? row.principal_id : undefined
}

const updatePreferencesSql = async (db: SqlQuery, user: string, body: unknown): Promise<BareResponse> => {
  const change = readPreferencesChange(body)
  if (isBareResponse(change)) return change
  const { rows } = await db.query(MERGE, [
    user,
    change.language ?? null,
    change.timezone ?? null,
    change.mfa_enabled ?? null,
    new Date()
  ])
  const row = rows[0] as PreferencesRow
  return ok({
    id: row.id,
    language: row.language,
    timezone: row.timezone,
    mfa_enabled: row.mfa_enabled,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString()
  })
}

/** Bare Fastify, PUT language only, on a database already holding `BARE_SQL_SCHEMA` and the seed. */
export const startBareFastifySql = async (db: SqlQuery, close: () => Promise<void>): Promise<BareServer> => {
  const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT })
  app.put(LANGUAGE_PATH, async (request, reply) => {
    const user = await authenticateSql(db, request.headers.authorization)
    const response = user === undefined ? unauthorized() : await updatePreferencesSql(db, user, request.body)
    return reply.code(response.status).headers(response.headers).send(response.body)
  })
  await app.listen({ host: "127.0.0.1", port: 0 })
  const { port } = app.server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await app.close()
      await close()
    }
  }
}
