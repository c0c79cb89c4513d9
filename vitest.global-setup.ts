import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { fileURLToPath } from "node:url"
import pg from "pg"

/**
 * With DATABASE_URL set, the PostgreSQL suites run in a database of their own whose `public` schema already holds
 * Accord's tables, as a database does once anyone ran the server without --database-schema: no test may depend on
 * what else lives in the database. The database is dropped afterwards. Where it cannot be made (no server, or no
 * CREATEDB right), the suites run on DATABASE_URL as given, or skip saying why.
 */
export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  const given = process.env["DATABASE_URL"]
  if (given === undefined || given === "") return undefined
  const name = `accord_used_${randomBytes(5).toString("hex")}`
  const admin = new pg.Client({ connectionString: given, connectionTimeoutMillis: 3000 })
  try {
    await admin.connect()
    await admin.query(`CREATE DATABASE ${name}`)
  } catch (error) {
    await admin.end().catch(() => undefined)
    console.warn(`vitest: PostgreSQL suites use DATABASE_URL as given (no database of their own: ${String(error)})`)
    return undefined
  }
  const used = new URL(given)
  used.pathname = `/${name}`
  const migrate = spawnSync(
    process.execPath,
    [fileURLToPath(new URL("packages/store-postgres/dist/cli.js", import.meta.url)), "migrate"],
    { env: { ...process.env, DATABASE_URL: used.href, DATABASE_SCHEMA: "" }, encoding: "utf8" }
  )
  if (migrate.status !== 0) throw new Error(`could not put Accord's tables into public: ${migrate.stderr}`)
  process.env["DATABASE_URL"] = used.href
  return async () => {
    process.env["DATABASE_URL"] = given
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined)
    await admin.end()
  }
}
