import { paths, send, type RawResponse } from "@accord/conformance"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { SIGNAL_REPEAT_WINDOW_MS } from "@accord/node/stop-signals"
import { randomBytes } from "node:crypto"
import { setTimeout as delay } from "node:timers/promises"
import {
  bearer,
  buildServer,
  CLIENT_TOKEN,
  makeTempDir,
  openConnection,
  spawnCli,
  stopped,
  testSeed,
  USER_TOKEN,
  type Cli,
  groupIsRunning,
  isRunning,
  killGroup,
  killLeftovers,
  spawnNpmStart
} from "./cli-helpers.js"
import { REPEATED_SIGNAL_MESSAGE } from "../src/logger.js"
import { databaseUrl, dropSchema, freshSchema, skipReason } from "./postgres-helpers.js"

const url = databaseUrl ?? ""
const run = randomBytes(4).toString("hex")

let temp: Awaited<ReturnType<typeof makeTempDir>> | undefined
let seedPath = ""
const clis: Array<Cli> = []
const schemas: Array<string> = []

beforeAll(async () => {
  buildServer()
  temp = await makeTempDir()
  seedPath = await temp.write("seed.json", testSeed)
}, 120_000)
afterAll(async () => {
  // A failed test may leave a cluster running; it must not outlive the suite or hold a schema. Killing the primary
  // is enough: a worker exits as soon as its primary is gone (node:cluster).
  await killLeftovers(clis)
  await temp?.cleanup()
  if (databaseUrl !== undefined) for (const schema of schemas) await dropSchema(url, schema)
})

const spawn = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Cli => {
  const cli = spawnCli(args, env)
  clis.push(cli)
  return cli
}

/** The options of a cluster of `workers` on a schema of its own, with the test seed, on a free port. */
const clusterArgs = (workers: number, extraArgs: ReadonlyArray<string> = []): ReadonlyArray<string> => {
  const schema = freshSchema()
  schemas.push(schema)
  const args = ["--workers", String(workers), "--store", "postgres", "--database-url", url]
  return [...args, "--database-schema", schema, "--port", "0", "--seed", seedPath, ...extraArgs]
}

/** A cluster of `workers` on a schema of its own, with the test seed, on a free port. */
const spawnCluster = (workers: number, env: Record<string, string> = {}, extraArgs: ReadonlyArray<string> = []): Cli =>
  spawn(clusterArgs(workers, extraArgs), env)

/** The sum of a Prometheus counter's samples whose labels include every one of `labels`. */
const counterSum = (text: string, name: string, labels: ReadonlyArray<string>): number =>
  text
    .split("\n")
    .filter((line) => line.startsWith(`${name}{`) && labels.every((label) => line.includes(label)))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0)

/** The pids of both workers, once the primary has logged them listening. */
const bothWorkers = (cli: Cli): Promise<ReadonlyArray<unknown>> =>
  waitFor("both workers listen", () => {
    const lines = workersListening(cli)
    return lines.length === 2 ? lines.map((line) => line["workerPid"]) : undefined
  })

/**
 * A request a worker holds, waiting for its body, which keeps that worker's drain open until `finish()`. Its
 * `100 Continue` (sent once the handler reads the body) proves a worker has it, not the primary's queue.
 */
const holdDrain = async (base: string) => {
  const connection = await openConnection(base)
  connection.send(
    `PUT ${paths.preferences} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${USER_TOKEN}\r\n` +
      "Content-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n"
  )
  await connection.received("HTTP/1.1 100 Continue\r\n\r\n")
  return { ...connection, finish: () => connection.send("{}") }
}

/** Polls `check` every 20 ms until it returns a value; fails after `timeoutMs` saying what it waited for. */
const waitFor = async <A>(what: string, check: () => A | undefined, timeoutMs = 20_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = check()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error(`gave up after ${timeoutMs} ms waiting until ${what}`)
    await delay(20)
  }
}

type LogLine = Readonly<Record<string, unknown>>
const linesWith = (cli: Cli, message: string): ReadonlyArray<LogLine> =>
  cli.logLines().filter((line) => line["msg"] === message)

/** The primary's "worker listening" lines: one per worker that started, replacements included. */
const workersListening = (cli: Cli): ReadonlyArray<LogLine> =>
  linesWith(cli, "worker listening").filter((line) => line["pid"] === cli.child.pid)

/**
 * Which process answered each request: the pid pino puts on every log line, found through the request id the test
 * chose. Nothing of it reaches a client.
 */
const answeredBy = (cli: Cli, requestIds: ReadonlyArray<string>): Promise<ReadonlyMap<string, number>> =>
  waitFor(`every request is logged (${requestIds.length})`, () => {
    const pids = new Map<string, number>()
    for (const line of linesWith(cli, "request"))
      if (typeof line["requestId"] === "string" && typeof line["pid"] === "number")
        pids.set(line["requestId"], line["pid"])
    return requestIds.every((id) => pids.has(id)) ? pids : undefined
  })

const readPreferences = (base: string, requestId: string): Promise<RawResponse> =>
  send(base, {
    method: "GET",
    path: paths.preferences,
    headers: { ...bearer(USER_TOKEN), "X-Request-Id": requestId },
    timeoutMs: 10_000
  })

describe("--workers, before any database is involved", () => {
  it("--workers 2 with the memory store exits 2 saying why, before forking anything", async () => {
    const cli = spawn(["--workers", "2", "--port", "0"])
    expect(await cli.exited).toEqual({ code: 2, signal: null })
    expect(cli.stderr()).toBe(
      "accord: --workers (WORKERS) 2 needs --store postgres: with the memory store each worker would hold its own data\n"
    )
    expect(cli.stdout()).toBe("")
  })

  it("WORKERS=1 runs no cluster: the process itself serves and prints the listening line", async () => {
    const cli = spawn(["--port", "0", "--seed", seedPath], { WORKERS: "1" })
    const base = await cli.listening
    expect((await readPreferences(base, `single-${run}`)).status).toBe(200)
    const pids = await answeredBy(cli, [`single-${run}`])
    expect(pids.get(`single-${run}`)).toBe(cli.child.pid)
    expect(cli.logLines().filter((line) => line["pid"] !== cli.child.pid)).toEqual([])
    expect(linesWith(cli, "worker started")).toEqual([])
    expect(await stopped(cli)).toEqual({ code: 0, signal: null })
    expect(cli.stdout()).toBe(`listening on ${base}\n`)
  })

  it("a worker that cannot start stops the cluster with its exit code, without retrying: 1 for an unreachable database", async () => {
    // Port 1 on the loopback: nothing listens there, the connection is refused at once.
    const cli = spawn(["--workers", "2", "--store", "postgres", "--database-url", "postgres://u:pw@127.0.0.1:1/x"])
    expect(await cli.exited).toEqual({ code: 1, signal: null })
    expect(cli.stdout()).toBe("")
    expect(cli.stderr()).toContain("accord: cannot start the postgres store: store unreachable: connect ECONNREFUSED")
    const json = cli
      .stderr()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as LogLine)
    // Two workers forked, none replaced.
    expect(json.filter((line) => line["msg"] === "worker started")).toHaveLength(2)
    expect(json.filter((line) => line["msg"] === "worker could not start, stopping the cluster")).toHaveLength(1)
    expect(json.filter((line) => line["msg"] === "worker exited, replacing it")).toEqual([])
  })

  it("2 for a bad seed file", async () => {
    const args = ["--workers", "2", "--store", "postgres", "--database-url", "postgres://u:pw@127.0.0.1:1/x"]
    const cli = spawn([...args, "--seed", `missing-${run}.json`])
    expect(await cli.exited).toEqual({ code: 2, signal: null })
    expect(cli.stderr()).toContain(`missing-${run}.json`)
    expect(cli.stdout()).toBe("")
  })
})

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined ? `--workers 2 --store postgres (${skipReason})` : "--workers 2 --store postgres",
  () => {
    it("prints one listening line for the cluster, and both workers answer on that one port (--port 0)", async () => {
      const cli = spawnCluster(2)
      const base = await cli.listening
      const listening = await waitFor("both workers listen", () => {
        const lines = workersListening(cli)
        return lines.length === 2 ? lines : undefined
      })
      // Each worker listens on the port the cluster gave the first one.
      expect(listening.map((line) => line["url"])).toEqual([base, base])

      const ids = Array.from({ length: 20 }, (_, index) => `both-${run}-${index}`)
      const responses = await Promise.all(ids.map((id) => readPreferences(base, id)))
      expect(responses.map((res) => res.status)).toEqual(ids.map(() => 200))
      // Nothing tells a client which process answered.
      for (const res of responses) expect(JSON.stringify(res.headers)).not.toMatch(/\bpid\b|worker/i)

      const pids = await answeredBy(cli, ids)
      const workerPids = listening.map((line) => line["workerPid"])
      expect(new Set(pids.values())).toEqual(new Set(workerPids))
      expect(workerPids).not.toContain(cli.child.pid)

      expect(await stopped(cli)).toEqual({ code: 0, signal: null })
      expect(cli.stdout()).toBe(`listening on ${base}\n`)
      expect(linesWith(cli, "worker stopped")).toHaveLength(2)
    }, 60_000)

    it("the memory rate limit is one for the cluster, and the primary's one scrape counts both workers' requests", async () => {
      const capacity = 5
      const refillPerSecond = 0.5
      const cli = spawnCluster(2, {}, [
        ...["--metrics-port", "0", "--rate-limit-capacity", String(capacity)],
        ...["--rate-limit-refill-per-second", String(refillPerSecond)]
      ])
      const base = await cli.listening
      await bothWorkers(cli)
      const metricsUrl = await waitFor("the primary serves metrics", () => {
        const line = linesWith(cli, "metrics listening").find((entry) => entry["pid"] === cli.child.pid)
        return typeof line?.["metricsUrl"] === "string" ? line["metricsUrl"] : undefined
      })

      const started = performance.now()
      const ids = Array.from({ length: 16 }, (_, index) => `limited-${run}-${index}`)
      const statuses: Array<number> = []
      for (const id of ids) statuses.push((await readPreferences(base, id)).status)
      const elapsedSeconds = (performance.now() - started) / 1000
      const pids = await answeredBy(cli, ids)
      expect(new Set(pids.values()).size).toBe(2)
      // One allowance for both workers: each on its own would let `capacity` through, 10 in all.
      const allowed = statuses.filter((status) => status === 200).length
      expect(allowed).toBeLessThanOrEqual(capacity + Math.ceil(refillPerSecond * elapsedSeconds))
      expect(allowed).toBeGreaterThanOrEqual(capacity)
      expect(statuses.filter((status) => status === 429)).toHaveLength(ids.length - allowed)

      const scrape = await (await fetch(`${metricsUrl}/metrics`)).text()
      const route = 'route="/api/users/v1/preferences/language/"'
      expect(counterSum(scrape, "accord_http_requests_total", [route, 'status="200"'])).toBe(allowed)
      expect(counterSum(scrape, "accord_http_requests_total", [route, 'status="429"'])).toBe(ids.length - allowed)
      // Each worker's limits, summed: two workers at 4 hashes at once.
      expect(scrape).toMatch(/^accord_password_hashes_max_running 8$/m)

      expect(await stopped(cli)).toEqual({ code: 0, signal: null })
    }, 60_000)

    it("replaces a worker killed with SIGKILL while a client's requests keep getting 200", async () => {
      const cli = spawnCluster(2)
      const base = await cli.listening
      const first = await waitFor("both workers listen", () => {
        const lines = workersListening(cli)
        return lines.length === 2 ? lines.map((line) => line["workerPid"]) : undefined
      })
      const victim = first[0]
      if (typeof victim !== "number") throw new Error("no worker pid logged")

      const statuses = new Map<number, number>()
      const failures: Array<string> = []
      const ids: Array<string> = []
      let replacement: unknown
      for (let index = 0; ; index++) {
        const id = `kill-${run}-${index}`
        ids.push(id)
        try {
          const res = await readPreferences(base, id)
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        } catch (error) {
          failures.push(`${id}: ${String(error)}`)
        }
        if (index === 10) {
          // Killed between two requests: a request in flight on a killed process is lost with it, by definition.
          // The client then waits for the primary to have seen the death: a connection node:cluster hands to a
          // worker in the very instant it dies is lost too, and no server code can prevent that. Killed once the
          // answers so far are logged: SIGKILL loses the lines a worker has not written yet (docs/operations.md, Logs).
          await answeredBy(cli, ids)
          process.kill(victim, "SIGKILL")
          await waitFor("the primary saw the worker die", () =>
            linesWith(cli, "worker exited, replacing it").find((line) => line["workerPid"] === victim)
          )
        }
        replacement ??= workersListening(cli).find((line) => !first.includes(line["workerPid"]))?.["workerPid"]
        if (replacement !== undefined && index % 10 === 0) {
          const served = await answeredBy(cli, ids)
          if ([...served.values()].filter((pid) => pid === replacement).length >= 3) break
        }
        if (index > 2000) throw new Error("the replacement never served")
        await delay(5)
      }

      expect(failures).toEqual([])
      expect([...statuses.keys()]).toEqual([200])
      expect(linesWith(cli, "worker exited, replacing it")).toEqual([
        expect.objectContaining({ workerPid: victim, code: null, signal: "SIGKILL", delayMs: 100 })
      ])
      expect(linesWith(cli, "worker started").filter((line) => line["replacing"] !== undefined)).toHaveLength(1)
      // Requests were served by the survivor, then by the replacement too; never by the dead worker after its death.
      const served = await answeredBy(cli, ids)
      expect(new Set(served.values())).toEqual(new Set([...first, replacement]))
      expect(ids.slice(11).map((id) => served.get(id))).not.toContain(victim)

      expect(await stopped(cli)).toEqual({ code: 0, signal: null })
      expect(cli.stdout()).toBe(`listening on ${base}\n`)
    }, 60_000)

    it("SIGTERM drains every worker: requests in flight on both (bodies half-sent, hashes queued) are answered, exit 0", async () => {
      // Hashing slow enough to keep plan entries queued, with room for all of them.
      const cli = spawnCluster(2, { SCRYPT_N: "16384", SCRYPT_P: "1", SCRYPT_MAX_QUEUED: "64" })
      const base = await cli.listening
      const workerPids = await waitFor("both workers listen", () => {
        const lines = workersListening(cli)
        return lines.length === 2 ? lines.map((line) => line["workerPid"]) : undefined
      })

      // Each connection first gets a complete exchange, so it is accepted, and the log says which worker holds it.
      const count = 24
      const connections = await Promise.all(
        Array.from({ length: count }, async (_, index) => {
          const connection = await openConnection(base)
          connection.send(`GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: conn-${run}-${index}\r\n\r\n`)
          await connection.received('{"status":"ok"}')
          return connection
        })
      )
      const holders = await answeredBy(
        cli,
        connections.map((_, index) => `conn-${run}-${index}`)
      )

      const body = (index: number) =>
        JSON.stringify({ email: `drain-${index}@example.com`, password: `pw-${run}-${index}` })
      const head = (index: number) =>
        `POST ${paths.planEntries} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${CLIENT_TOKEN}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body(index))}\r\n\r\n`
      // Even connections: the body stops after 3 bytes; odd ones: whole, then held by the hashing queue.
      const halfSent = (index: number) => index % 2 === 0
      const answers = connections.map((connection, index) => {
        connection.send(head(index) + (halfSent(index) ? body(index).slice(0, 3) : body(index)))
        return connection.received('"password":"********"}').then(
          () => true,
          () => false
        )
      })
      const halfSentHolders = new Set(
        connections.flatMap((_, index) => (halfSent(index) ? [holders.get(`conn-${run}-${index}`)] : []))
      )
      expect(halfSentHolders, "requests in flight on both workers").toEqual(new Set(workerPids))

      cli.child.kill("SIGTERM")
      await waitFor("both workers drain", () => {
        const draining = linesWith(cli, "draining").map((line) => line["pid"])
        return workerPids.every((pid) => draining.includes(pid)) ? true : undefined
      })
      connections.forEach((connection, index) => {
        if (halfSent(index)) connection.send(body(index).slice(3))
      })
      const received = await Promise.all(connections.map((connection) => connection.closed))
      expect(await Promise.all(answers)).toEqual(connections.map(() => true))
      received.forEach((wire) => {
        // A response's status line follows the previous body directly: no line break between them.
        const statuses = [...wire.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1])
        expect(statuses).toEqual(["200", "201"])
      })
      expect(await cli.exited).toEqual({ code: 0, signal: null })
      expect(linesWith(cli, "worker stopped").map((line) => [line["code"], line["signal"]])).toEqual([
        [0, null],
        [0, null]
      ])
      const requestStatuses = linesWith(cli, "request").map((line) => line["status"])
      expect(requestStatuses.filter((status) => status !== 200 && status !== 201)).toEqual([])
      expect(requestStatuses).toHaveLength(2 * count)
    }, 90_000)

    it("the request lines both workers still buffered at SIGTERM reach stderr, whole lines, one per answer", async () => {
      const cli = spawnCluster(2)
      const base = await cli.listening
      const workerPids = await bothWorkers(cli)
      // Connections until both workers hold one (node:cluster deals them out round-robin).
      const connections: Array<{ connection: Awaited<ReturnType<typeof openConnection>>; pid: unknown }> = []
      while (new Set(connections.map(({ pid }) => pid)).size < 2 && connections.length < 20) {
        const connection = await openConnection(base)
        const id = `flush-conn-${run}-${connections.length}`
        connection.send(`GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: ${id}\r\n\r\n`)
        await connection.received('{"status":"ok"}')
        connections.push({ connection, pid: (await answeredBy(cli, [id])).get(id) })
      }
      expect(new Set(connections.map(({ pid }) => pid))).toEqual(new Set(workerPids))
      // Then a burst on every connection, and SIGTERM as soon as the last answer is in.
      const ids: Array<string> = []
      await Promise.all(
        connections.map(async ({ connection }, index) => {
          for (let request = 0; request < 50; request++) {
            const id = `flush-${run}-${index}-${request}`
            ids.push(id)
            connection.send(`GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: ${id}\r\n\r\n`)
            await connection.received(`: ${id}\r\n`)
          }
        })
      )
      cli.child.kill("SIGTERM")
      expect(await cli.exited).toEqual({ code: 0, signal: null })
      // logLines parses every line: a line cut by another process's write would throw.
      const logged = linesWith(cli, "request").map((line) => line["requestId"])
      expect(logged.filter((id) => typeof id === "string" && id.startsWith(`flush-${run}-`)).sort()).toEqual(
        [...ids].sort()
      )
    }, 60_000)

    it("a second SIGTERM a second or more into the drain kills the workers and exits at once with 143", async () => {
      const cli = spawnCluster(2)
      const base = await cli.listening
      const workerPids = await bothWorkers(cli)
      const held = await Promise.all(Array.from({ length: 4 }, () => holdDrain(base)))
      cli.child.kill("SIGTERM")
      await waitFor("both workers drain", () => {
        const draining = linesWith(cli, "draining").map((line) => line["pid"])
        return workerPids.every((pid) => draining.includes(pid)) ? true : undefined
      })
      // Sooner, it would be the same stop by another route (@accord/node/stop-signals).
      await delay(SIGNAL_REPEAT_WINDOW_MS * 1.5)
      cli.child.kill("SIGTERM")
      expect(await cli.exited).toEqual({ code: 143, signal: null })
      await waitFor("the workers are gone", () => (workerPids.some(isRunning) ? undefined : true))
      for (const connection of held) connection.destroy()
    }, 60_000)

    it("README's `npm start -- --workers ...`, Ctrl-C to its process group (npm forwards a copy to the primary, which forwards one to each worker): one drain, the held requests answered, exit 0, nothing left", async () => {
      const cli = spawnNpmStart(clusterArgs(2), {}, { detached: true })
      clis.push(cli)
      const pgid = cli.child.pid as number
      try {
        const base = await cli.listening
        const workerPids = await waitFor("both workers listen", () => {
          const lines = linesWith(cli, "worker listening")
          return lines.length === 2 ? lines.map((line) => line["workerPid"]) : undefined
        })
        const primaryPid = linesWith(cli, "cluster listening")[0]?.["pid"]
        const held = await Promise.all(Array.from({ length: 4 }, () => holdDrain(base)))
        process.kill(-pgid, "SIGINT")
        await waitFor("the primary and both workers drain", () => {
          const draining = linesWith(cli, "draining").map((line) => line["pid"])
          return [primaryPid, ...workerPids].every((pid) => draining.includes(pid)) ? true : undefined
        })
        // The copies come within milliseconds: past the window, whatever was coming has come.
        await delay(SIGNAL_REPEAT_WINDOW_MS)
        for (const connection of held) connection.finish()
        const received = await Promise.all(held.map((connection) => connection.closed))
        for (const wire of received)
          expect(wire).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n[\s\S]*"language":"en"/)
        expect(await cli.exited).toEqual({ code: 0, signal: null })
        expect(linesWith(cli, "second signal, killing the workers without finishing the drain")).toEqual([])
        expect(linesWith(cli, "worker stopped").map((line) => line["code"])).toEqual([0, 0])
        expect(groupIsRunning(pgid), "a process of npm's group is still running").toBe(false)
      } finally {
        killGroup(pgid)
      }
    }, 90_000)

    it("a worker that got SIGINT itself (a terminal's Ctrl-C reaches every process) ignores the primary's forwarded one: one drain, exit 0", async () => {
      const cli = spawnCluster(2)
      const base = await cli.listening
      const workerPids = await bothWorkers(cli)
      const held = await Promise.all(Array.from({ length: 4 }, () => holdDrain(base)))
      const loggedByEachWorker = (message: string) =>
        waitFor(`both workers log "${message}"`, () => {
          const pids = linesWith(cli, message).map((line) => line["pid"])
          return workerPids.every((pid) => pids.includes(pid)) ? true : undefined
        })
      // Delivered one after the other (a terminal delivers them at once, when the kernel may merge the two).
      for (const pid of workerPids) process.kill(Number(pid), "SIGINT")
      await loggedByEachWorker("draining")
      cli.child.kill("SIGINT")
      // Within the window the worker takes it as the same stop, after it as one the primary alone may act on.
      await waitFor("both workers log the primary's SIGINT", () => {
        const pids = [...linesWith(cli, "already draining"), ...linesWith(cli, REPEATED_SIGNAL_MESSAGE)].map(
          (line) => line["pid"]
        )
        return workerPids.every((pid) => pids.includes(pid)) ? true : undefined
      })
      // The held requests complete: the drain was not cut short by the second SIGINT each worker got.
      for (const connection of held) connection.finish()
      const received = await Promise.all(held.map((connection) => connection.closed))
      for (const wire of received)
        expect(wire).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n[\s\S]*"language":"en"/)
      expect(await cli.exited).toEqual({ code: 0, signal: null })
      expect(linesWith(cli, "worker stopped").map((line) => line["code"])).toEqual([0, 0])
      expect(linesWith(cli, "worker exited, replacing it")).toEqual([])
    }, 60_000)
  }
)
