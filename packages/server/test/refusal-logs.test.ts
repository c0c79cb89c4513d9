import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { buildServer, spawnCli, type Cli } from "./cli-helpers.js"

beforeAll(buildServer, 120_000)

/** Writes raw bytes on a fresh connection and resolves once the server has answered and closed it. */
const rawExchange = (url: string, bytes: string): Promise<string> =>
  new Promise((resolve) => {
    const { port, hostname } = new URL(url)
    let wire = ""
    const socket = connect(Number(port), hostname, () => socket.write(bytes))
    socket.on("data", (data) => (wire += data.toString("latin1")))
    socket.on("error", () => undefined)
    socket.on("close", () => resolve(wire))
  })

const requestLines = (cli: Cli) => cli.logLines().filter((line) => line["msg"] === "request")

// docs/SECURITY.md, item 16: refusals Node makes itself (malformed HTTP, headers too large) get one JSON request
// line each with their real status, like every other answer.
describe.each(["koa", "fastify", "express", "fetch"] as const)("refusals Node makes, --adapter %s", (adapter) => {
  let cli: Cli
  let url = ""
  beforeAll(async () => {
    cli = spawnCli(["--adapter", adapter, "--port", "0", "--max-header-size", "2048"])
    url = await cli.listening
  })
  afterAll(async () => {
    cli.child.kill("SIGTERM")
    await cli.exited
  })

  it("logs a 400 for malformed HTTP and a 431 for headers too large, one line each", async () => {
    const before = requestLines(cli).length
    const malformed = await rawExchange(url, "GET /api/health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n")
    expect(malformed).toMatch(/^HTTP\/1\.1 400 /)
    const tooLarge = await rawExchange(url, `GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(4096)}\r\n\r\n`)
    expect(tooLarge).toMatch(/^HTTP\/1\.1 431 /)
    // The child's stderr arrives on its own schedule: wait (up to 5 s) for the two lines rather than a fixed time.
    for (let waited = 0; requestLines(cli).length < before + 2 && waited < 5000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const logged = requestLines(cli).slice(before)
    expect(logged.map((line) => line["status"])).toEqual([400, 431])
    for (const line of logged) expect(line).toMatchObject({ route: null, method: null, durationMs: null })
  })
})
