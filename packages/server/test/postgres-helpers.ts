import { randomBytes } from "node:crypto"
import { Effect, Layer } from "effect"
import pg from "pg"
import type { StoreServices } from "@accord/domain"
import { PostgresStoreLive } from "@accord/store-postgres"

/** The server the PostgreSQL tests run against; they skip, saying so in their name, when it is not set. */
export const databaseUrl: string | undefined = process.env["DATABASE_URL"] || undefined

export const skipReason = "skipped: DATABASE_URL not set"

/**
 * Why a suite that needs the server cannot run: DATABASE_URL unset, or set but not answering `SELECT 1` within 5 s;
 * undefined when it answers.
 */
export const unansweredReason = async (): Promise<string | undefined> => {
  if (databaseUrl === undefined) return skipReason
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 })
  client.on("error", () => undefined)
  try {
    await client.connect()
    await client.query("SELECT 1")
    return undefined
  } catch (error) {
    // The driver's words only ("connect ECONNREFUSED ..."): they never carry the URL's password.
    return `skipped: DATABASE_URL does not answer (${error instanceof Error ? error.message : String(error)})`
  } finally {
    await client.end().catch(() => undefined)
  }
}

/** A schema name no other test uses, so test files can run in parallel and drop what they made. */
export const freshSchema = (): string => `accord_srv_${randomBytes(6).toString("hex")}`

/** Runs one statement on a connection of its own, outside any store (to inspect, or to clean up). */
export const adminQuery = async (
  url: string,
  text: string,
  params: ReadonlyArray<unknown> = []
): Promise<pg.QueryResult> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await client.query(text, [...params])
  } finally {
    await client.end()
  }
}

export const dropSchema = async (url: string, schema: string): Promise<void> => {
  await adminQuery(url, `DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
}

/**
 * A PostgreSQL store in a schema of its own, named when the layer is built (each build gets a new one) and dropped
 * when it is released. The dropper is acquired first, so it runs last: after the store's pool has ended.
 */
export const storeInFreshSchema = (url: string): Layer.Layer<StoreServices, unknown> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const schema = freshSchema()
      yield* Effect.addFinalizer(() => Effect.promise(() => dropSchema(url, schema)))
      return PostgresStoreLive({ connectionString: url, schema })
    })
  )
