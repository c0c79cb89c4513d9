import autocannon from "autocannon"
import { fork, type ChildProcess } from "node:child_process"
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { benchHeaders, type Scenario } from "./fixtures.js"
import type { ChildMessage } from "./protocol.js"
import { userToken } from "./workload.js"

/** Child processes of the bench and the load generator that drives them. */

const here = dirname(fileURLToPath(import.meta.url))

export const forkChild = (
  script: string,
  args: ReadonlyArray<string>,
  execArgv: ReadonlyArray<string> = []
): ChildProcess =>
  fork(join(here, script), [...args], { execArgv: [...execArgv], stdio: ["ignore", "inherit", "inherit", "ipc"] })

export const messageOf = <T extends ChildMessage["type"]>(
  child: ChildProcess,
  type: T
): Promise<Extract<ChildMessage, { type: T }>> =>
  new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`child exited (${code}) before sending "${type}"`))
    child.once("exit", onExit)
    child.on("message", (message: ChildMessage) => {
      if (message.type !== type) return
      child.off("exit", onExit)
      resolve(message as Extract<ChildMessage, { type: T }>)
    })
  })

export const stopChild = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on every Linux build in use). */
const USER_HZ = 100

/** CPU seconds (user + system) a process has used so far, from /proc; undefined where there is no /proc. */
export const cpuSecondsOf = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / USER_HZ
  } catch {
    return undefined
  }
}

const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN)

export interface LoadResult {
  readonly requests: number
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  readonly failures: number
}

/** One autocannon run. Latencies are kept exactly (autocannon's histogram rounds to whole milliseconds). */
export const runLoad = (url: string, scenario: Scenario, seconds: number, connections: number): Promise<LoadResult> =>
  new Promise((resolve, reject) => {
    const latencies: Array<number> = []
    const users = scenario.users
    let sent = 0
    // A spread scenario: each request, across all connections, the next user's token, and that user's next body, so
    // that every write changes its record (as each does on the one record of the hot scenario).
    const setupRequest =
      users === undefined
        ? undefined
        : (request: autocannon.Request): autocannon.Request => {
            const index = sent++
            const next = scenario.requests[Math.floor(index / users) % scenario.requests.length]
            return {
              ...request,
              ...(next !== undefined && { body: next.body }),
              headers: { ...benchHeaders, authorization: `Bearer ${userToken(index % users)}` }
            }
          }
    const instance = autocannon(
      {
        url,
        connections,
        duration: seconds,
        method: "PUT",
        headers: benchHeaders,
        requests: scenario.requests.map((request) => ({
          method: "PUT" as const,
          path: request.path,
          body: request.body,
          ...(setupRequest !== undefined && { setupRequest })
        }))
      },
      (error: unknown, result) => {
        if (error !== null && error !== undefined)
          return reject(error instanceof Error ? error : new Error(String(error)))
        latencies.sort((a, b) => a - b)
        resolve({
          requests: result.requests.total,
          requestsPerSecond: result.requests.total / result.duration,
          p50Ms: percentile(latencies, 50),
          p99Ms: percentile(latencies, 99),
          maxMs: latencies.at(-1) ?? Number.NaN,
          failures: result.errors + result.timeouts + result.non2xx
        })
      }
    )
    instance.on("response", (_client, _status, _bytes, responseTime) => latencies.push(responseTime))
  })
