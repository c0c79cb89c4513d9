import { afterAll, beforeAll, describe, it } from "@effect/vitest"
import { makeTempDir, testSeed } from "./cli-helpers.js"
import { runFaultMatrix } from "./delivery-faults.js"

// The delivery fault matrix (delivery-faults.ts) on the memory store.

let temp: Awaited<ReturnType<typeof makeTempDir>>
let seedFile = ""
beforeAll(async () => {
  temp = await makeTempDir()
  seedFile = await temp.write("seed.json", testSeed)
})
afterAll(() => temp.cleanup())

describe("delivery faults on the memory store", () => {
  it("every fault of one endpoint of two: the healthy one unaffected, the faulty one per the rules", async () => {
    await runFaultMatrix(async () => ({ store: "memory" }), seedFile)
  }, 180_000)
})
