import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { buildServer, makeTempDir, spawnCli, testSeed, USER_TOKEN, type Cli } from "./cli-helpers.js"

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
  const temp = makeTempDir()
  beforeAll(async () => {
    const seedFile = await (await temp).write("seed.json", testSeed)
    cli = spawnCli([
      ...["--adapter", adapter, "--port", "0", "--max-header-size", "2048", "--seed", seedFile],
      ...["--request-timeout-ms", "1500", "--headers-timeout-ms", "500"]
    ])
    url = await cli.listening
  })
  afterAll(async () => {
    cli.child.kill("SIGTERM")
    await cli.exited
    await (await temp).cleanup()
  })

  /**
   * Waits for `count` request lines after `before` (the child's stderr arrives on its own schedule, in batches), giving
   * up after 20 s: a bound only for lines that never come.
   */
  const linesAfter = async (before: number, count: number) => {
    const giveUp = performance.now() + 20_000
    while (requestLines(cli).length < before + count && performance.now() < giveUp) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    return requestLines(cli).slice(before)
  }

  it("logs a 408 for headers that never finish, and a 408 (not 400) with its route for a body cut by the timeout", async () => {
    const before = requestLines(cli).length
    const headersStalled = await rawExchange(url, "GET /api/health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    expect(headersStalled).toMatch(/^HTTP\/1\.1 408 /)
    const bodyStalled = await rawExchange(
      url,
      "PUT /api/users/v1/preferences/language/ HTTP/1.1\r\nHost: x\r\n" +
        `Authorization: Bearer ${USER_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"lang`
    )
    expect(bodyStalled).toMatch(/^HTTP\/1\.1 408 /)
    const logged = await linesAfter(before, 2)
    expect(logged.map((line) => line["status"])).toEqual([408, 408])
    expect(logged[0]).toMatchObject({ method: null, route: null, path: null })
    expect(logged[1]).toMatchObject({ method: "PUT", route: "/api/users/v1/preferences/language/", path: null })
  })

  it("logs the path of a request no route matched: escaped, capped, a long unknown segment masked", async () => {
    const before = requestLines(cli).length
    const probes = [
      "/.env",
      "/api/plans/v1/subscription-plans/private/",
      `/api/nope/${USER_TOKEN}/wp-login.php`,
      "/caf%C3%A9/%0A",
      `/${"a/".repeat(200)}`
    ]
    for (const path of probes) expect((await fetch(url + path)).status).toBe(404)
    const logged = await linesAfter(before, probes.length)
    expect(logged.map((line) => line["path"])).toEqual([
      "/.env",
      "/api/plans/v1/subscription-plans/private/",
      "/api/nope/[masked]/wp-login.php",
      "/caf%C3%A9/%0A",
      `/${"a/".repeat(127)}...`
    ])
    for (const line of logged) expect(line).toMatchObject({ method: "GET", route: null, status: 404 })
    expect(cli.stderr()).not.toContain(USER_TOKEN)
  })

  it("logs a 400 for malformed HTTP and a 431 for headers too large, one line each", async () => {
    const before = requestLines(cli).length
    const malformed = await rawExchange(url, "GET /api/health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n")
    expect(malformed).toMatch(/^HTTP\/1\.1 400 /)
    const tooLarge = await rawExchange(url, `GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(4096)}\r\n\r\n`)
    expect(tooLarge).toMatch(/^HTTP\/1\.1 431 /)
    const logged = await linesAfter(before, 2)
    expect(logged.map((line) => line["status"])).toEqual([400, 431])
    for (const line of logged) expect(line).toMatchObject({ route: null, method: null, durationMs: null })
  })
})
