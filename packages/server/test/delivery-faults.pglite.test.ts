import { cp } from "node:fs/promises"
import { join } from "node:path"
import { afterAll, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { migrateDataDir } from "@accord/store-postgres"
import { makeTempDir, testSeed } from "./cli-helpers.js"
import { runFaultMatrix } from "./delivery-faults.js"

// The delivery fault matrix (delivery-faults.ts) on PGlite: each cell a data directory of its own, a copy of one made
// (initialised and migrated) once, since PGlite's initdb takes many seconds on a busy machine.

let temp: Awaited<ReturnType<typeof makeTempDir>>
let seedFile = ""
let template = ""
beforeAll(async () => {
  temp = await makeTempDir()
  seedFile = await temp.write("seed.json", testSeed)
  template = join(temp.dir, "template")
  await Effect.runPromise(migrateDataDir({ dataDir: template }))
}, 180_000)
afterAll(() => temp.cleanup())

describe("delivery faults on PGlite", () => {
  it("every fault of one endpoint of two: the healthy one unaffected, the faulty one per the rules", async () => {
    await runFaultMatrix(async (fault) => {
      const dataDir = join(temp.dir, fault.replaceAll(" ", "-"))
      await cp(template, dataDir, { recursive: true })
      return { store: "pglite", dataDir }
    }, seedFile)
  }, 300_000)
})
