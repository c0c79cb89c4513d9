import { randomBytes } from "node:crypto"
import { Effect, Layer } from "effect"
import pg from "pg"
import { PostgresStoreLive, type PostgresStoreOptions } from "@accord/store-postgres"

/** The server the Postgres suites run against; they skip, saying so, when it is not set. */
export const databaseUrl: string | undefined = process.env.DATABASE_URL || undefined

export const skipReason = "DATABASE_URL not set"

/** A schema name no other test uses, so suites can run in parallel and drop what they made. */
export const freshSchema = (): string => `accord_test_${randomBytes(6).toString("hex")}`

/** Runs one statement on a connection of its own (outside any store), e.g. to inspect or break things. */
export const adminQuery = async (url: string, text: string, params: ReadonlyArray<unknown> = []) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await client.query(text, [...params])
  } finally {
    await client.end()
  }
}

export const dropSchema = (url: string, schema: string) => adminQuery(url, `DROP SCHEMA IF EXISTS "${schema}" CASCADE`)

/** Drops `schema` when the scope closes. */
export const dropSchemaOnClose = (url: string, schema: string) =>
  Effect.addFinalizer(() => Effect.promise(() => dropSchema(url, schema)))

/**
 * A store in a fresh schema that is dropped when the layer is released. The dropper is built first, so it is
 * released last: after the store's pool has ended.
 */
export const storeInFreshSchema = (
  url: string,
  options: Omit<PostgresStoreOptions, "connectionString" | "schema"> = {}
) => {
  const schema = freshSchema()
  return {
    schema,
    layer: PostgresStoreLive({ connectionString: url, schema, ...options }).pipe(
      Layer.provide(Layer.effectDiscard(dropSchemaOnClose(url, schema)))
    )
  }
}
