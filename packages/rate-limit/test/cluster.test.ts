import { execFile, execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { makeClusterRateLimiter } from "@accord/rate-limit"

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
const fixture = fileURLToPath(new URL("./cluster-fixture.mjs", import.meta.url))

interface WorkerResult {
  readonly waits: ReadonlyArray<number>
  readonly errors: ReadonlyArray<string>
}

const runCluster = (args: ReadonlyArray<string>): Promise<ReadonlyArray<WorkerResult>> =>
  new Promise((resolve, reject) => {
    execFile(process.execPath, [fixture, ...args], { cwd: repoRoot, timeout: 30_000 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`the cluster failed: ${error.message}\n${stderr}`))
      else resolve(JSON.parse(stdout) as ReadonlyArray<WorkerResult>)
    })
  })

describe("the cluster limiter (node:cluster)", () => {
  beforeAll(() => {
    // The fixture runs on the compiled package, like a deployed server.
    execFileSync(process.execPath, [`${repoRoot}node_modules/typescript/bin/tsc`, "-b", "packages/rate-limit"], {
      cwd: repoRoot,
      stdio: "pipe"
    })
  }, 120_000)

  it("two workers share the allowance their primary keeps", async () => {
    const results = await runCluster([])
    const waits = results.flatMap((result) => result.waits)
    expect(waits.filter((wait) => wait === 0)).toHaveLength(5)
    // Refused with the seconds left of the 5 s window.
    for (const wait of waits.filter((wait) => wait > 0)) expect(wait).toBeGreaterThanOrEqual(4)
    expect(results.flatMap((result) => result.errors)).toEqual([])
  }, 30_000)

  it("limits by itself, each worker to its share, telling onError, in workers whose primary did not start its side", async () => {
    const results = await runCluster(["no-primary"])
    // Each worker's local capacity, 2 of the 5: 4 pass in all, the rest refused.
    for (const result of results) expect(result.waits.map((wait) => wait > 0)).toEqual([false, false, true, true])
    for (const result of results) expect(result.errors.length).toBeGreaterThanOrEqual(1)
  }, 30_000)

  it("refuses to build a worker's limiter outside a cluster worker", () => {
    expect(() => makeClusterRateLimiter({ capacity: 1, refillPerSecond: 1 })).toThrow(/cluster worker/)
  })
})
