import { afterAll, describe, it } from "@effect/vitest"
import { Redacted } from "effect"
import { makeTempDir, testSeed } from "./cli-helpers.js"
import { runFaultMatrix } from "./delivery-faults.js"
import { databaseUrl, dropSchema, freshSchema, skipReason } from "./postgres-helpers.js"

// The delivery fault matrix (delivery-faults.ts) on PostgreSQL (DATABASE_URL): each cell a schema of its own.

const schemas: Array<string> = []
let temp: Awaited<ReturnType<typeof makeTempDir>> | undefined
afterAll(async () => {
  await temp?.cleanup()
  await Promise.all(schemas.map((schema) => dropSchema(databaseUrl ?? "", schema)))
})

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined ? `delivery faults on PostgreSQL (${skipReason})` : "delivery faults on PostgreSQL",
  () => {
    it("every fault of one endpoint of two: the healthy one unaffected, the faulty one per the rules", async () => {
      temp = await makeTempDir()
      const seedFile = await temp.write("seed.json", testSeed)
      await runFaultMatrix(async () => {
        const schema = freshSchema()
        schemas.push(schema)
        return { store: "postgres", databaseUrl: Redacted.make(databaseUrl ?? ""), databaseSchema: schema }
      }, seedFile)
    }, 300_000)
  }
)
