import { Cache, Clock, Effect, Exit, Schema } from "effect"
import {
  Authenticator,
  ClientId,
  Principal,
  type Seed,
  type SeedReport,
  StoreAdmin,
  Unauthenticated,
  type Unavailable,
  UserId
} from "@accord/domain"
import { digestsEqual, tokenDigest } from "@accord/node/token-digest"
import { lockUserDefaults } from "./payment-methods.js"
import { queryRows, type SqlExecutor } from "./sql-executor.js"

const credentialRows = queryRows(
  Schema.Union([
    Schema.Struct({ token_digest: Schema.String, kind: Schema.Literal("user"), principal_id: Schema.toType(UserId) }),
    Schema.Struct({
      token_digest: Schema.String,
      kind: Schema.Literal("client"),
      principal_id: Schema.toType(ClientId)
    })
  ])
)
const addedRows = queryRows(Schema.Struct({ added: Schema.Literal(1) }))
const countRows = queryRows(Schema.Struct({ count: Schema.Number }))

const invalidToken = new Unauthenticated({ reason: "invalid_token" })

export interface CredentialCacheOptions {
  /**
   * How long a token the database knew is accepted without asking it again, default
   * `DEFAULT_CREDENTIAL_CACHE_TTL_MS`: the longest a credential deleted from the database keeps working in this
   * process (docs/operations.md, "Revoking a token"). 0: every request asks the database.
   */
  readonly credentialCacheTtlMs?: number
  /** The most tokens kept (the least recently used go first), default `DEFAULT_CREDENTIAL_CACHE_CAPACITY`. */
  readonly credentialCacheCapacity?: number
}

export const DEFAULT_CREDENTIAL_CACHE_TTL_MS = 5000
export const DEFAULT_CREDENTIAL_CACHE_CAPACITY = 10_000

/** The principal of a token digest, asked of the database. */
const lookUp = (sql: SqlExecutor, digest: string): Effect.Effect<Principal, Unauthenticated | Unavailable> =>
  Effect.flatMap(
    credentialRows(sql, "SELECT token_digest, kind, principal_id FROM credentials WHERE token_digest = $1", [digest]),
    ([row]) => {
      if (row === undefined || !digestsEqual(row.token_digest, digest)) return Effect.fail(invalidToken)
      return Effect.succeed(
        row.kind === "user"
          ? Principal.User({ userId: row.principal_id })
          : Principal.Client({ clientId: row.principal_id })
      )
    }
  )

/**
 * Static tokens, stored only as SHA-256 digests. The lookup is by digest, which tells an attacker nothing they
 * could steer; the final comparison is constant-time all the same. A digest found is kept for
 * `credentialCacheTtlMs` (keyed by digest: no token is held), so a request costs no query; a digest not found, or a
 * failed lookup, is not kept (a token seeded meanwhile works at once, and guessed tokens cannot evict good ones faster
 * than they cost the database a query each).
 */
export const makeAuthenticator = (
  sql: SqlExecutor,
  options: CredentialCacheOptions = {}
): Effect.Effect<Authenticator["Service"]> => {
  const ttlMs = options.credentialCacheTtlMs ?? DEFAULT_CREDENTIAL_CACHE_TTL_MS
  if (ttlMs <= 0) return Effect.succeed(Authenticator.of({ authenticate: (token) => lookUp(sql, tokenDigest(token)) }))
  return Effect.map(
    Cache.makeWith((digest: string) => lookUp(sql, digest), {
      capacity: options.credentialCacheCapacity ?? DEFAULT_CREDENTIAL_CACHE_CAPACITY,
      timeToLive: (exit) => (Exit.isSuccess(exit) ? ttlMs : 0)
    }),
    (cache) => Authenticator.of({ authenticate: (token) => Cache.get(cache, tokenDigest(token)) })
  )
}

const insertCredential = `INSERT INTO credentials (token_digest, kind, principal_id) VALUES ($1, $2, $3)
  ON CONFLICT (token_digest) DO NOTHING RETURNING 1 AS added`

// A seeded default is honoured only when the user has none yet: the seed never takes the default from a method
// the API made default.
const insertPaymentMethod = `INSERT INTO payment_methods (id, user_id, is_default, created_at, updated_at)
  VALUES ($1, $2, $3 AND NOT EXISTS (SELECT 1 FROM payment_methods WHERE user_id = $2 AND is_default), $4::timestamptz, $4::timestamptz)
  ON CONFLICT (id) DO NOTHING RETURNING 1 AS added`

/**
 * Inserts what the seed has and the database lacks, in one transaction; never updates a row. A known token keeps
 * its principal, a new token for a known user is one more credential, a known payment method id is left alone.
 */
const loadSeed = (sql: SqlExecutor, seed: Seed): Effect.Effect<SeedReport, Unavailable> =>
  Effect.gen(function* () {
    const now = new Date(yield* Clock.currentTimeMillis)
    const credentials = [
      ...seed.users.map((user) => [tokenDigest(user.token), "user", user.id] as const),
      ...seed.clients.map((client) => [tokenDigest(client.token), "client", client.id] as const)
    ]
    // Two processes loading seeds at once take row and advisory locks in one global order, so neither waits on
    // the other in a cycle. The sort is stable: within a user the seed's order (first default wins) is kept.
    const byDigest = [...credentials].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    const byUser = [...seed.payment_methods].sort((a, b) =>
      a.user_id < b.user_id ? -1 : a.user_id > b.user_id ? 1 : 0
    )
    return yield* sql.transaction((tx) =>
      Effect.gen(function* () {
        let credentialsAdded = 0
        for (const credential of byDigest) {
          credentialsAdded += (yield* addedRows(tx, insertCredential, credential)).length
        }
        let paymentMethodsAdded = 0
        for (const method of byUser) {
          yield* lockUserDefaults(tx, method.user_id)
          paymentMethodsAdded += (yield* addedRows(tx, insertPaymentMethod, [
            method.id,
            method.user_id,
            method.is_default,
            now
          ])).length
        }
        return { credentialsAdded, paymentMethodsAdded }
      })
    )
  })

export const makeStoreAdmin = (sql: SqlExecutor) =>
  StoreAdmin.of({
    loadSeed: (seed) => loadSeed(sql, seed),
    ping: Effect.asVoid(sql.query("SELECT 1")),
    countCredentials: Effect.map(
      countRows(sql, "SELECT count(*)::int AS count FROM credentials", []),
      ([row]) => row?.count ?? 0
    )
  })
