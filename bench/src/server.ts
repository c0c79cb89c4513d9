import { startFastifyServer } from "@accord/adapter-fastify"
import { startKoaServer } from "@accord/adapter-koa"
import type { AccordRuntime } from "@accord/core"
import { ScryptPasswordHasherLive } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"
import { Layer, ManagedRuntime } from "effect"
import { makeBareStore } from "./bare-domain.js"
import { startBareFastify, startBareKoa } from "./bare-servers.js"
import { decodeSeed, seedInput } from "./fixtures.js"
import { isServerKind, type ServerKind, type ServerReady } from "./protocol.js"

/**
 * One benchmarked server in its own process (so the load generator never shares its event loop). Usage, from the
 * bench through `fork`: `server.js <kind> <users> [database]`, kind one of protocol.ts's SERVER_KINDS (the SQL
 * baselines' database: `{"url","schema"}` as JSON for PostgreSQL, a data directory for PGlite). Reports its URL over IPC
 * and exits on SIGTERM or when the parent goes away.
 */

/** The SQL baselines: a schema of their own on PostgreSQL, or a PGlite data directory, seeded before listening. */
const startBareSql = async (kind: "fastify-bare-pg" | "fastify-bare-pglite", users: number, where: string) => {
  const { BARE_SQL_SCHEMA, seedBareSql, startBareFastifySql } = await import("./bare-sql.js")
  if (kind === "fastify-bare-pg") {
    const { default: pg } = await import("pg")
    const { url, schema } = JSON.parse(where) as { url: string; schema: string }
    const setup = new pg.Client({ connectionString: url })
    await setup.connect()
    await setup.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"; SET search_path TO "${schema}"; ${BARE_SQL_SCHEMA}`)
    await seedBareSql(setup, users)
    await setup.end()
    const pool = new pg.Pool({ connectionString: url, max: 10, options: `-c search_path="${schema}"` })
    return startBareFastifySql(pool, () => pool.end())
  }
  const { PGlite } = await import("@electric-sql/pglite")
  const db = await PGlite.create({ dataDir: where })
  await db.exec(BARE_SQL_SCHEMA)
  await seedBareSql(db, users)
  return startBareFastifySql(db, () => db.close())
}

const start = async (
  kind: ServerKind,
  users: number,
  where: string | undefined
): Promise<{ url: string; close: () => Promise<void> }> => {
  if (kind === "fastify-bare-pg" || kind === "fastify-bare-pglite") {
    if (where === undefined) throw new Error(`${kind} needs its database`)
    return startBareSql(kind, users, where)
  }
  if (kind === "fastify-bare") return startBareFastify(makeBareStore(users))
  if (kind === "koa-bare") return startBareKoa(makeBareStore(users))
  // The peers and the later baselines keep their state in the bare baselines' store and do their work through
  // bare-domain.ts. They are imported only in their own process, so the other servers load exactly what they loaded
  // before these came.
  if (kind === "express-bare") return (await import("./bare-express.js")).startBareExpress(makeBareStore(users))
  if (kind === "hono-bare") return (await import("./bare-hono.js")).startBareHono(makeBareStore(users))
  if (kind === "fastify-tsrest") return (await import("./peer-tsrest.js")).startTsRestFastify(makeBareStore(users))
  if (kind === "effect-httpapi") return (await import("./peer-effect.js")).startEffectHttpApi(makeBareStore(users))
  const runtime: AccordRuntime = ManagedRuntime.make(
    Layer.merge(makeMemoryStore(decodeSeed(seedInput(users))), ScryptPasswordHasherLive())
  )
  // Build the store (and load the seed) before listening, as a host does, so the first request does not pay for it.
  await runtime.context()
  const options = { runtime, host: "127.0.0.1", port: 0 }
  return kind === "fastify-accord" ? startFastifyServer(options) : startKoaServer(options)
}

const main = async (): Promise<void> => {
  const [kind, users = "1000", where] = process.argv.slice(2)
  if (!isServerKind(kind) || process.send === undefined)
    throw new Error("server.js is started by the bench with fork()")
  const server = await start(kind, Number(users), where)
  const stop = (): void => {
    // Exit through process.exit so that --cpu-prof writes its profile.
    void server.close().finally(() => process.exit(0))
  }
  process.once("SIGTERM", stop)
  process.once("disconnect", stop)
  const ready: ServerReady = { type: "ready", url: server.url }
  process.send(ready)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
