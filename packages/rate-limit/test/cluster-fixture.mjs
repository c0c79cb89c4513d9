// Run by cluster.test.ts on the built package: a node:cluster primary with two workers, each asking its cluster
// limiter four times for one key; the primary prints every worker's answers as one JSON line. With the argument
// "no-primary" the primary does not start the limiter's side of it, as a primary that forgot would.
import cluster from "node:cluster"
import process from "node:process"
import { makeClusterRateLimiter, startClusterRateLimitPrimary } from "@accord/rate-limit"

if (cluster.isPrimary) {
  if (process.argv[2] !== "no-primary") startClusterRateLimitPrimary()
  const results = []
  for (let index = 0; index < 2; index++) {
    cluster.fork().on("message", (message) => {
      if (message?.kind !== "result") return
      results.push(message)
      if (results.length < 2) return
      process.stdout.write(`${JSON.stringify(results)}\n`)
      for (const worker of Object.values(cluster.workers ?? {})) worker?.kill()
    })
  }
} else {
  const errors = []
  const limiter = makeClusterRateLimiter({
    capacity: 5,
    refillPerSecond: 1,
    timeoutMs: 300,
    // Each of the two workers' share, should the primary not answer.
    localCapacity: 2,
    onError: (error) => errors.push(String(error))
  })
  const waits = []
  for (let index = 0; index < 4; index++) waits.push(await limiter.consume("user:u_1"))
  process.send?.({ kind: "result", waits, errors })
}
