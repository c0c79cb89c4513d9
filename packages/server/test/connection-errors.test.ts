import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { buildServer, spawnCli, stopped, type Cli } from "./cli-helpers.js"

beforeAll(buildServer, 120_000)

/** Asks for the API reference's largest file and resets the connection (TCP RST) as soon as the answer starts. */
const resetMidAnswer = (url: string): Promise<void> =>
  new Promise((resolve) => {
    const { port, hostname } = new URL(url)
    const socket = connect(Number(port), hostname, () => {
      socket.write("GET /api/docs/swagger-ui-bundle.js HTTP/1.1\r\nHost: accord\r\n\r\n")
    })
    socket.once("data", () => socket.resetAndDestroy())
    socket.on("error", () => undefined)
    socket.on("close", () => resolve())
  })

// docs/SECURITY.md, "Every log line is JSON": Koa's default error listener printed a plain-text stack trace to
// stderr (the JSON log) when a client went away mid-answer. Every adapter is checked, at the most verbose level.
describe.each(["koa", "fastify", "express", "fetch"] as const)("clients gone mid-answer, --adapter %s", (adapter) => {
  let cli: Cli
  beforeAll(async () => {
    cli = spawnCli(["--adapter", adapter, "--port", "0", "--log-level", "trace"])
    await cli.listening
  })
  afterAll(async () => {
    cli.child.kill("SIGTERM")
    await cli.exited
  })

  it("leaves only JSON lines in the log, and the server serves on", async () => {
    const url = await cli.listening
    await Promise.all(Array.from({ length: 5 }, () => resetMidAnswer(url)))
    expect((await fetch(`${url}/api/health`)).status).toBe(200)
    expect(() => cli.logLines()).not.toThrow()
    expect(cli.stderr()).not.toMatch(/^\s+at /m)
  })
})

it("stops cleanly after such connections (exit 0)", async () => {
  const cli = spawnCli(["--adapter", "koa", "--port", "0"])
  await resetMidAnswer(await cli.listening)
  expect(await stopped(cli)).toEqual({ code: 0, signal: null })
  expect(() => cli.logLines()).not.toThrow()
})
