import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { migrations, runMigrateCli } from "@accord/store-postgres"
import { adminQuery, databaseUrl, dropSchema, freshSchema, skipReason } from "./postgres-helpers.js"

const latest = Math.max(...migrations.map((migration) => migration.version))

const run = async (argv: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const code = await runMigrateCli(argv, env, { out: (line) => out.push(line), err: (line) => err.push(line) })
  return { code, out: out.join("\n"), err: err.join("\n") }
}

describe("accord-migrate usage", () => {
  it("no command, an unknown command or an unknown flag: usage on stderr, exit 2", async () => {
    for (const argv of [[], ["upgrade"], ["migrate", "--database-url", "postgres://x@127.0.0.1/db", "--verbose"]]) {
      const result = await run(argv)
      expect(result.code).toBe(2)
      expect(result.err).toContain("usage: accord-migrate migrate")
    }
  })

  it("--help prints the usage, exit 0", async () => {
    expect(await run(["--help"])).toMatchObject({ code: 0, out: expect.stringContaining("--database-schema NAME") })
  })

  it("no database URL: exit 2 naming the flag and the variable", async () => {
    const result = await run(["migrate"])
    expect(result.code).toBe(2)
    expect(result.err).toContain("pass --database-url or set DATABASE_URL")
  })

  it("a bad schema name: exit 2 with the reason", async () => {
    const result = await run([
      "migrate",
      "--database-url",
      "postgres://x@127.0.0.1/db",
      "--database-schema",
      "no-dashes"
    ])
    expect(result.code).toBe(2)
    expect(result.err).toContain('invalid PostgreSQL schema name "no-dashes"')
  })

  it("reads the schema from DATABASE_SCHEMA, the server's variable, and --database-schema wins over it", async () => {
    const url = ["migrate", "--database-url", "postgres://x@127.0.0.1/db"]
    const fromEnv = await run(url, { DATABASE_SCHEMA: "from-env" })
    expect(fromEnv.code).toBe(2)
    expect(fromEnv.err).toContain('invalid PostgreSQL schema name "from-env"')
    const fromFlag = await run([...url, "--database-schema", "from-flag"], { DATABASE_SCHEMA: "from-env" })
    expect(fromFlag.err).toContain('invalid PostgreSQL schema name "from-flag"')
  })

  it("lists both options with their variables in the usage", async () => {
    const { out } = await run(["-h"])
    expect(out).toContain("--database-url URL")
    expect(out).toContain("(DATABASE_URL)")
    expect(out).toContain("(DATABASE_SCHEMA, default the connection's, usually public)")
  })

  it("both a database URL and a data directory: exit 2, naming both", async () => {
    const result = await run(["migrate", "--data-dir", "/nonexistent/accord"], {
      DATABASE_URL: "postgres://x@127.0.0.1/db"
    })
    expect(result.code).toBe(2)
    expect(result.err).toContain("both a database URL and a data directory: pass one")
  })

  it("migrate --data-dir creates a PGlite database, saying so, then finds it up to date; replay-events works on it", async () => {
    const parent = await mkdtemp(join(tmpdir(), "accord-migrate-"))
    const dataDir = join(parent, "data")
    try {
      expect(await run(["migrate", "--data-dir", dataDir])).toEqual({
        code: 0,
        out: `applied ${migrations.map((m) => m.version).join(", ")}; now at version ${latest}`,
        err: `accord-migrate: initialising a new PGlite database in ${dataDir}`
      })
      expect(await run(["migrate"], { DATA_DIR: dataDir })).toEqual({
        code: 0,
        out: `up to date at version ${latest}`,
        err: ""
      })
      expect(await run(["replay-events", "--data-dir", dataDir])).toEqual({
        code: 0,
        out: "0 failed events pending again",
        err: ""
      })
    } finally {
      await rm(parent, { recursive: true, force: true })
    }
  }, 120_000)

  it("an unreachable database: exit 1, and the password in the URL is not printed", async () => {
    const result = await run(["migrate", "--database-url", "postgres://app:s3cr3t-pw@127.0.0.1:1/db"])
    expect(result.code).toBe(1)
    expect(result.err).toContain("database unreachable")
    expect(result.err + result.out).not.toContain("s3cr3t-pw")
    // Given in a flag, the password shows in the process list: one warning names the variable to use instead.
    expect(result.err.split("\n").filter((line) => line.includes("carries a password"))).toEqual([
      "accord-migrate: --database-url carries a password: it shows in the process list; pass it in DATABASE_URL instead"
    ])
  })
})

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined ? `accord-migrate on a database (skipped: ${skipReason})` : "accord-migrate on a database",
  () => {
    it("applies the migrations into the schema once, then reports up to date (URL from DATABASE_URL)", async () => {
      const url = databaseUrl ?? ""
      const schema = freshSchema()
      try {
        expect(await run(["migrate", "--database-url", url, "--database-schema", schema])).toEqual({
          code: 0,
          out: `applied ${migrations.map((m) => m.version).join(", ")}; now at version ${latest}`,
          err: ""
        })
        expect(await run(["migrate", "--database-schema", schema], { DATABASE_URL: url })).toEqual({
          code: 0,
          out: `up to date at version ${latest}`,
          err: ""
        })
      } finally {
        await dropSchema(url, schema)
      }
    })

    it("replay-events on a schema that does not exist: exit 2 naming it, and the schema is not created", async () => {
      const url = databaseUrl ?? ""
      const misspelt = freshSchema()
      const result = await run(["replay-events", "--database-schema", misspelt], { DATABASE_URL: url })
      expect(result).toEqual({
        code: 2,
        out: "",
        err: `no schema named "${misspelt}" in this database; nothing was created (a misspelling? \`accord-migrate migrate\` creates one)`
      })
      const found = await adminQuery(url, "SELECT count(*)::int AS count FROM pg_namespace WHERE nspname = $1", [
        misspelt
      ])
      expect(found.rows).toEqual([{ count: 0 }])
    })

    it("replay-events on a schema without Accord's tables: exit 1, and nothing is created in it", async () => {
      const url = databaseUrl ?? ""
      const schema = freshSchema()
      await adminQuery(url, `CREATE SCHEMA "${schema}"`)
      try {
        const result = await run(["replay-events", "--database-schema", schema], { DATABASE_URL: url })
        expect(result.code).toBe(1)
        expect(result.err).toContain(`schema "${schema}" holds no Accord tables; nothing was changed`)
        const tables = await adminQuery(url, "SELECT count(*)::int AS count FROM pg_tables WHERE schemaname = $1", [
          schema
        ])
        expect(tables.rows).toEqual([{ count: 0 }])
      } finally {
        await dropSchema(url, schema)
      }
    })

    it('replay-events puts the failed events back to pending, due now (docs/operations.md, "Events")', async () => {
      const url = databaseUrl ?? ""
      const schema = freshSchema()
      try {
        expect((await run(["migrate", "--database-url", url, "--database-schema", schema])).code).toBe(0)
        // Two events as a relay that gave up leaves them, one delivered.
        await adminQuery(
          url,
          `INSERT INTO "${schema}".events (id, subject, sequence, owner, event, at, status) VALUES
             ('019a4f6e-3c2b-7d40-9a1e-5f6b7c8d9e01', 'users/u_1', 1, 'u_1', '{}', now(), 'failed'),
             ('019a4f6e-3c2b-7d40-9a1e-5f6b7c8d9e02', 'users/u_1', 2, 'u_1', '{}', now(), 'failed'),
             ('019a4f6e-3c2b-7d40-9a1e-5f6b7c8d9e03', 'users/u_1', 3, 'u_1', '{}', now(), 'delivered')`
        )
        expect(await run(["replay-events", "--database-schema", schema], { DATABASE_URL: url })).toEqual({
          code: 0,
          out: "2 failed events pending again",
          err: ""
        })
        const statuses = await adminQuery(url, `SELECT status FROM "${schema}".events ORDER BY sequence`)
        expect(statuses.rows).toEqual([{ status: "pending" }, { status: "pending" }, { status: "delivered" }])
        expect(await run(["replay-events", "--database-schema", schema], { DATABASE_URL: url })).toMatchObject({
          code: 0,
          out: "0 failed events pending again"
        })
      } finally {
        await dropSchema(url, schema)
      }
    })
  }
)
