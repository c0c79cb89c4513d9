import { existsSync, readFileSync } from "node:fs"
import { connect, type Socket } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { buildServer, spawnCli, type Cli } from "./cli-helpers.js"

beforeAll(buildServer, 120_000)

// docs/SECURITY.md, "Clients that never read their answers": the flood of issue 15 item 2, bounded in time and size.
const CONNECTIONS = 100
const REQUESTS_PER_CONNECTION = 5000
const FLOOD_MS = 3000
/** Stated bounds, with wide margins (measured: 50-100 MiB of growth and 0.4-0.6 s; before the fix 470 MiB and 4 s). */
const MAX_GROWTH_MIB = 200
const MAX_WAIT_MS = 2000

const hasProc = existsSync("/proc/self/status")

/** Resident memory now and its peak so far, in MiB, from Linux's /proc. */
const memoryOf = (pid: number): { readonly rss: number; readonly peak: number } => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN)
  return { rss: kib("VmRSS") / 1024, peak: kib("VmHWM") / 1024 }
}

/** A connection that sends `bytes` and never reads what comes back. */
const openNonReader = (url: string, bytes: string): Socket => {
  const { hostname, port } = new URL(url)
  const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(bytes))
  socket.pause()
  socket.on("error", () => undefined)
  return socket
}

const timedHealth = async (url: string): Promise<{ readonly status: number; readonly ms: number }> => {
  const started = performance.now()
  const response = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(15_000) })
  await response.text()
  return { status: response.status, ms: performance.now() - started }
}

describe.skipIf(!hasProc)(
  `clients that never read their answers${hasProc ? "" : " (skipped: reads memory from Linux /proc, absent here)"}`,
  () => {
    describe.each(["koa", "fastify", "express", "fetch"] as const)("--adapter %s", (adapter) => {
      let cli: Cli
      let url = ""
      beforeAll(async () => {
        cli = spawnCli(["--adapter", adapter, "--port", "0", "--log-level", "warn"])
        url = await cli.listening
      })
      afterAll(async () => {
        if (cli.child.exitCode === null) cli.child.kill("SIGKILL")
        await cli.exited
      })

      it(`keeps memory and another client's wait bounded while ${CONNECTIONS} connections pipeline unread requests, then drains at once`, async () => {
        const pid = cli.child.pid ?? 0
        await timedHealth(url)
        const before = memoryOf(pid)
        const pipelined = "GET /api/health HTTP/1.1\r\nHost: flood\r\n\r\n".repeat(REQUESTS_PER_CONNECTION)
        const flood = Array.from({ length: CONNECTIONS }, () => openNonReader(url, pipelined))

        const waits: Array<{ readonly status: number; readonly ms: number }> = []
        for (const until = Date.now() + FLOOD_MS; Date.now() < until;) {
          waits.push(await timedHealth(url))
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        const during = memoryOf(pid)
        expect(waits.every((wait) => wait.status === 200)).toBe(true)
        expect(Math.max(...waits.map((wait) => wait.ms))).toBeLessThan(MAX_WAIT_MS)
        expect(during.peak - before.rss).toBeLessThan(MAX_GROWTH_MIB)

        // Still serving as before, and a drain is not held up by the flood's connections (still open on this side).
        expect((await timedHealth(url)).status).toBe(200)
        const stopping = performance.now()
        cli.child.kill("SIGTERM")
        expect((await cli.exited).code).toBe(0)
        expect(performance.now() - stopping).toBeLessThan(5000)
        for (const socket of flood) socket.destroy()
      })
    })
  }
)

/** Resolves with every byte a connection gets until it closes, reading only from `afterMs` on. */
const readAfter = (socket: Socket, afterMs: number): Promise<number> =>
  new Promise((resolve) => {
    let received = 0
    socket.on("data", (chunk: Buffer) => (received += chunk.length))
    socket.once("close", () => resolve(received))
    setTimeout(() => socket.resume(), afterMs)
  })

describe.each(["koa", "fastify", "express", "fetch"] as const)("connection limits, --adapter %s", (adapter) => {
  let cli: Cli
  let url = ""
  beforeAll(async () => {
    cli = spawnCli([
      ...["--adapter", adapter, "--port", "0", "--log-level", "warn"],
      ...["--max-connections", "4", "--request-timeout-ms", "1000", "--headers-timeout-ms", "1000"]
    ])
    url = await cli.listening
  })
  afterAll(async () => {
    cli.child.kill("SIGTERM")
    await cli.exited
  })

  it("closes a connection whose answers the client stops reading once the request timeout has passed", async () => {
    // Ten copies of the docs bundle (1.7 MB each) fill the kernel's buffers: the server's output stops draining.
    const bundle = "GET /api/docs/swagger-ui-bundle.js HTTP/1.1\r\nHost: slow\r\n\r\n"
    const socket = openNonReader(url, bundle.repeat(10))
    const bundleBytes = Number((await fetch(`${url}/api/docs/swagger-ui-bundle.js`)).headers.get("content-length"))
    // Read only after three request timeouts: by then the server has closed it, having sent what the buffers took.
    const received = await readAfter(socket, 3000)
    expect(received).toBeLessThan(bundleBytes * 10)
  })

  it("--max-connections: a connection past the cap is closed at once, and served again once one closes", async () => {
    const idle = await Promise.all(
      Array.from(
        { length: 4 },
        () =>
          new Promise<Socket>((resolve) => {
            const { hostname, port } = new URL(url)
            const socket = connect({ host: hostname, port: Number(port) }, () => resolve(socket))
            socket.on("error", () => undefined)
          })
      )
    )
    await expect(fetch(`${url}/api/health`, { headers: { connection: "close" } })).rejects.toThrow()
    for (const socket of idle) socket.destroy()
    // The server sees the closes on its own schedule.
    let status = 0
    for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
      status = await fetch(`${url}/api/health`, { headers: { connection: "close" } }).then(
        (response) => response.status,
        () => 0
      )
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(status).toBe(200)
  })
})
