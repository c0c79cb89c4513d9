import { paths, send } from "@accord/conformance"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { randomBytes } from "node:crypto"
import { buildServer, makeTempDir, spawnCli, type Cli, killLeftovers } from "./cli-helpers.js"
import { adminQuery, databaseUrl, dropSchema, freshSchema, skipReason } from "./postgres-helpers.js"

// docs/operations.md, "Revoking a token": the CLI on PostgreSQL keeps a token it found for --credential-cache-ttl-ms
// (5 s by default), so a credential deleted from the database keeps working in a process that just used it; with 0,
// the next request is refused. The first process caches for the longest allowed (60 s), so that nothing here depends
// on how fast the machine is; the expiry itself is tested with a test clock in store-postgres's round-trips test.

const url = databaseUrl ?? ""
const run = randomBytes(4).toString("hex")
const users = [
  { id: `cached_${run}`, token: `credential-cache-default-${run}` },
  { id: `uncached_${run}`, token: `credential-cache-zero-${run}` }
]
const readAs = (base: string, token: string) =>
  send(base, { method: "GET", path: paths.preferences, headers: { Authorization: `Bearer ${token}` } })

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined
    ? `the credentials cache of the CLI on PostgreSQL (${skipReason})`
    : "the credentials cache of the CLI on PostgreSQL",
  () => {
    const schema = freshSchema()
    let temp: Awaited<ReturnType<typeof makeTempDir>> | undefined
    const clis: Array<Cli> = []
    let urls: ReadonlyArray<string> = []

    beforeAll(async () => {
      buildServer()
      temp = await makeTempDir()
      const seedPath = await temp.write("seed.json", { users })
      const common = ["--store", "postgres", "--database-url", url, "--database-schema", schema, "--port", "0"]
      clis.push(spawnCli([...common, "--seed", seedPath, "--credential-cache-ttl-ms", "60000"]))
      await clis[0]?.listening
      clis.push(spawnCli([...common, "--credential-cache-ttl-ms", "0"]))
      urls = await Promise.all(clis.map((cli) => cli.listening))
    }, 120_000)
    afterAll(async () => {
      await killLeftovers(clis)
      await temp?.cleanup()
      await dropSchema(url, schema)
    })

    it("a deleted token keeps working where it was just used, and is refused at once with a TTL of 0", async () => {
      const [cached, uncached] = users
      const [withCache = "", withoutCache = ""] = urls
      if (cached === undefined || uncached === undefined) throw new Error("no users")
      expect((await readAs(withCache, cached.token)).status).toBe(200)
      expect((await readAs(withoutCache, uncached.token)).status).toBe(200)
      await adminQuery(url, `DELETE FROM "${schema}".credentials`)
      expect((await readAs(withCache, cached.token)).status).toBe(200)
      expect((await readAs(withoutCache, uncached.token)).status).toBe(401)
      // A token the cached process never saw is asked of the database, and refused.
      expect((await readAs(withCache, uncached.token)).status).toBe(401)
    }, 60_000)
  }
)
