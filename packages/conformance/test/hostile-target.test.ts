import { exchange, MAX_RESPONSE_BYTES, send, type RawRequest, type RawResponse } from "@accord/conformance"
import { auditTarget, httpAudits, runAudit, type Audit } from "@accord/conformance/audits"
import { afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http"
import { createServer, type Server, type Socket } from "node:net"
import { brotliCompressSync, constants as zlib } from "node:zlib"
import { accordConformance, buildCompiled, killRunning, reportOf, tokens } from "./accord-conformance.js"

// accord-conformance against targets that do not play fair (docs/SECURITY.md, items 31 to 33): a body without end, a
// body that trickles in, escape sequences in what an audit quotes, bodies that would make a backtracking pattern
// rescan them. The command runs as users run it (compiled, its own process), so a crash, a hang or a process kept
// alive shows as such; the only time limit is each test's own.

/** Every listener a test started, closed after it with its connections. */
const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  killRunning()
  await Promise.all(closers.splice(0).map((close) => close()))
})

const listening = async (server: Server | ReturnType<typeof createHttpServer>): Promise<string> => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no port")
  return `http://127.0.0.1:${address.port}`
}

interface RawTarget {
  readonly url: string
  /** Per connection, in order: the body bytes the target handed to its socket before the connection closed. */
  readonly written: Array<number>
  /** Connections open now. */
  readonly open: () => number
}

/**
 * A TCP server that reads each connection's request head and then plays `answer` on it, whatever the request: for
 * `send` and for raw exchanges alike.
 */
const rawTarget = async (answer: (socket: Socket, wrote: (bytes: number) => void) => void): Promise<RawTarget> => {
  const sockets = new Set<Socket>()
  const written: Array<number> = []
  const server = createServer((socket) => {
    sockets.add(socket)
    const index = written.push(0) - 1
    socket.on("error", () => undefined)
    socket.on("close", () => sockets.delete(socket))
    let head = ""
    const onData = (data: Buffer): void => {
      head += data.toString("latin1")
      if (!head.includes("\r\n\r\n")) return
      socket.off("data", onData)
      socket.resume()
      answer(socket, (bytes) => (written[index] = (written[index] ?? 0) + bytes))
    }
    socket.on("data", onData)
  })
  const url = await listening(server)
  closers.push(
    () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  )
  return { url, written, open: () => sockets.size }
}

const OK_HEAD = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"

/**
 * Without end, as fast as the reader takes it; stops at 256 MiB all the same, so that a runner without a bound (the
 * code before the fix) fills this shared machine's memory no further than that.
 */
const ENDLESS_SAFETY_CAP = 256 * 1024 * 1024
const endless = (socket: Socket, wrote: (bytes: number) => void): void => {
  socket.write(OK_HEAD)
  const chunk = Buffer.alloc(64 * 1024, "x")
  let sent = 0
  const pump = (): void => {
    while (!socket.destroyed && sent < ENDLESS_SAFETY_CAP) {
      sent += chunk.length
      wrote(chunk.length)
      if (!socket.write(chunk)) return void socket.once("drain", pump)
    }
  }
  pump()
}

/** One byte every 100 ms, without end: each byte would re-arm a quiet timer. */
const trickle = (socket: Socket): void => {
  socket.write(OK_HEAD)
  const timer = setInterval(() => socket.write("x"), 100)
  socket.on("close", () => clearInterval(timer))
}

/**
 * What the kernel may hold of a stream between the target's socket and the runner's reads: a send buffer of up to
 * 4 MiB and a receive buffer of up to 32 MiB (Linux's tcp_wmem and tcp_rmem maxima, autotuned on loopback).
 */
const SOCKET_BUFFERS = 36 * 1024 * 1024

const auditsById = (...ids: ReadonlyArray<string>): ReadonlyArray<Audit> =>
  ids.map((id) => httpAudits.find((audit) => audit.id === id) ?? expect.fail(`no audit ${id}`))

beforeAll(() => {
  // The command runs compiled.
  buildCompiled("packages/conformance")
}, 120_000)

describe("accord-conformance against a target that sends without end", () => {
  it("fails the audit with the bound as its reason, reads no more than the bound, and prints the summary", async () => {
    const target = await rawTarget(endless)
    const ran = await accordConformance([
      "--url",
      `${target.url}/api`,
      ...tokens,
      "--only",
      "ACC-health-ok,ACC-auth-two-headers-401"
    ])
    expect(ran.stdout).toContain(
      "FAIL  MUST    ACC-health-ok\n      GET /api/health: the response is larger than 8388608 bytes (8 MiB), not read further\n"
    )
    expect(ran.stdout).toContain(
      "FAIL  MUST    ACC-auth-two-headers-401\n      the raw exchange: the response is larger than 8388608 bytes (8 MiB)"
    )
    expect(ran.stdout).toMatch(/^0 passed, 2 failed \(2 MUST, 0 SHOULD\), 0 skipped$/m)
    expect(ran.stderr).toBe("")
    expect(ran.code).toBe(1)
    // One connection per audit: each closed by the runner once past the bound, before the safety cap.
    expect(target.written).toHaveLength(2)
    for (const bytes of target.written) {
      expect(bytes).toBeGreaterThan(MAX_RESPONSE_BYTES)
      expect(bytes).toBeLessThan(MAX_RESPONSE_BYTES + SOCKET_BUFFERS)
    }
  }, 60_000)

  it("a body over the bound that decodes from a few bytes of br fails as too large, not decoded whole", async () => {
    // ACC-docs-content-encoding decodes what a target sends in br: 32 MiB of zeros are 6 KB of br.
    const bomb = brotliCompressSync(Buffer.alloc(4 * MAX_RESPONSE_BYTES), {
      params: { [zlib.BROTLI_PARAM_QUALITY]: 1 }
    })
    const page = Buffer.from("<!doctype html><html><body>no assets</body></html>")
    const server = createHttpServer((request: IncomingMessage, response: ServerResponse) => {
      const br = (request.headers["accept-encoding"] ?? "").includes("br")
      const body = br ? bomb : page
      response.writeHead(200, {
        "Content-Type": "text/html; charset=utf-8",
        "Cache-Control": "no-cache",
        "X-Content-Type-Options": "nosniff",
        "X-Request-Id": "hostile",
        Vary: "Accept-Encoding",
        "Content-Length": String(body.length),
        ...(br ? { "Content-Encoding": "br" } : {})
      })
      response.end(request.method === "HEAD" ? undefined : body)
    })
    const url = await listening(server)
    closers.push(() => new Promise((resolve) => server.close(() => resolve())))
    const ran = await accordConformance(["--url", `${url}/api`, ...tokens, "--only", "ACC-docs-content-encoding"])
    expect(ran.stdout).toMatch(
      /^FAIL {2}SHOULD {2}ACC-docs-content-encoding\n {6}GET \/api\/docs with Accept-Encoding: br: the br body does not decode: .*larger than 8388608 bytes/m
    )
    expect(ran.stdout).toMatch(/^0 passed, 1 failed \(0 MUST, 1 SHOULD\), 0 skipped$/m)
    expect(ran.code).toBe(0)
  }, 60_000)
})

describe("accord-conformance against a target that trickles", () => {
  it("an exchange that never goes quiet ends at its deadline", async () => {
    const target = await rawTarget(trickle)
    // A quiet time longer than the deadline: only the deadline can end it, however the timers run on a busy machine.
    await expect(exchange(target.url, "GET / HTTP/1.1\r\n\r\n", 60_000, { deadlineMs: 1500 })).rejects.toThrow(
      "the server still sent after 1500 ms, without closing the connection"
    )
    // `send`'s time-out was a deadline from the start already: kept so.
    await expect(send(target.url, { method: "GET", path: "/", timeoutMs: 1000 })).rejects.toThrow(
      "GET /: no complete response within 1000 ms"
    )
  }, 20_000)

  it("an audit past its deadline fails so, with every request it had in flight ended", async () => {
    const target = await rawTarget(trickle)
    // The transports as the CLI's, counting what has not settled yet.
    const inFlight = new Set<Promise<unknown>>()
    const counted = <T>(promise: Promise<T>): Promise<T> => {
      inFlight.add(promise)
      const forget = (): void => void inFlight.delete(promise)
      promise.then(forget, forget)
      return promise
    }
    const audited = auditTarget({
      url: `${target.url}/api`,
      userToken: "u",
      otherUserToken: "o",
      clientToken: "c",
      send: (request: RawRequest): Promise<RawResponse> => counted(send(target.url, request)),
      exchange: (bytes, signal) => counted(exchange(target.url, bytes, 5000, signal === undefined ? {} : { signal }))
    })
    for (const audit of auditsById("ACC-health-ok", "ACC-auth-two-headers-401")) {
      const result = await runAudit(audit, audited, { timeoutMs: 1000 })
      expect(result).toMatchObject({ id: audit.id, status: "fail", reason: "timed out after 1000 ms" })
      // Settled in the same turn as the deadline (a request's own time-out is 5 s, an exchange's 10 s).
      expect(inFlight.size).toBe(0)
    }
    // And the target sees its connections closed.
    await expect.poll(() => target.open(), { timeout: 10_000 }).toBe(0)
  }, 20_000)

  it("each audit fails at its deadline, the summary is printed, and the command exits", async () => {
    const target = await rawTarget(trickle)
    const ran = await accordConformance([
      "--url",
      `${target.url}/api`,
      ...tokens,
      "--only",
      "ACC-health-ok,ACC-auth-two-headers-401,ACC-probes-ok",
      "--audit-timeout-ms",
      "1000"
    ])
    for (const id of ["ACC-health-ok", "ACC-auth-two-headers-401", "ACC-probes-ok"])
      expect(ran.stdout).toContain(`FAIL  MUST    ${id}\n      timed out after 1000 ms\n`)
    expect(ran.stdout).toMatch(/^0 passed, 3 failed \(3 MUST, 0 SHOULD\), 0 skipped$/m)
    expect(ran.code).toBe(1)
  }, 30_000)

  it("past the run's time limit the audit running fails, and every audit not started yet fails as not started", async () => {
    const target = await rawTarget(trickle)
    const ids = [
      "ACC-health-ok",
      "ACC-probes-ok",
      "ACC-health-ignores-credentials",
      "ACC-openapi-document",
      "ACC-openapi-operations",
      "ACC-head-service-routes",
      "ACC-auth-missing-401",
      "ACC-auth-invalid-token-401"
    ]
    const ran = await accordConformance([
      "--url",
      `${target.url}/api`,
      ...tokens,
      "--only",
      ids.join(","),
      "--audit-timeout-ms",
      "1000",
      "--timeout-ms",
      "2500",
      "--json"
    ])
    const { results } = reportOf(ran)
    expect(results.map((result) => result.id)).toEqual(ids)
    expect(results.every((result) => result.status === "fail")).toBe(true)
    const notStarted = "not started: the run's time limit of 2500 ms was reached"
    // Two audits of 1 s each fit in 2.5 s; the third is cut at the limit; the last can never start.
    expect(results[0]?.reason).toBe("timed out after 1000 ms")
    for (const result of results)
      expect(result.reason).toMatch(
        /^(timed out after 1000 ms|timed out after \d+ ms: the run's time limit of 2500 ms was reached|not started: the run's time limit of 2500 ms was reached)$/
      )
    expect(results.at(-1)?.reason).toBe(notStarted)
    expect(ran.code).toBe(1)
  }, 30_000)
})

describe("accord-conformance against a target that writes escape sequences", () => {
  // Clear the screen, set the window title, write the clipboard (OSC 52), forge a PASS line over the FAIL by a
  // carriage return and on a line of its own, C1's CSI, DEL, and a right-to-left override.
  const HOSTILE =
    "\x1b[2J\x1b]0;owned\x07\x1b]52;c;ZWNobyBvd25lZA==\x07\rPASS  MUST    ACC-health-ok\n" +
    "PASS  MUST    ACC-forged\n\x9b31mred\x7f\u202eevil\u2066"
  const RAW_CONTROLS = ["\x1b", "\x07", "\r", "\x9b", "\x7f", "\u202e", "\u2066"]

  const hostileEcho = async (): Promise<string> => {
    const server = createHttpServer((_request, response) => {
      response.writeHead(418, { "Content-Type": "text/plain; charset=utf-8" }).end(HOSTILE)
    })
    const url = await listening(server)
    closers.push(() => new Promise((resolve) => server.close(() => resolve())))
    return url
  }

  it("shows them escaped in human output, every line of the reason indented under its result", async () => {
    const url = await hostileEcho()
    const ran = await accordConformance(["--url", `${url}/api`, ...tokens, "--only", "ACC-health-ok"])
    for (const control of RAW_CONTROLS) expect(ran.stdout.includes(control), JSON.stringify(control)).toBe(false)
    expect(ran.stdout).toContain(
      "FAIL  MUST    ACC-health-ok\n" +
        "      GET health -> 418 \\x1b[2J\\x1b]0;owned\\x07\\x1b]52;c;ZWNobyBvd25lZA==\\x07\\x0dPASS  MUST    ACC-health-ok\n" +
        "      PASS  MUST    ACC-forged\n" +
        "      \\x9b31mred\\x7f\\u202eevil\\u2066: expected status 200\n"
    )
    // The only unindented lines are the command's own: the heading, one result, the summary.
    const unindented = ran.stdout.split("\n").filter((line) => line !== "" && !line.startsWith("      "))
    expect(unindented).toEqual([
      `accord-conformance: 1 audits against ${url}/api`,
      "FAIL  MUST    ACC-health-ok",
      "0 passed, 1 failed (1 MUST, 0 SHOULD), 0 skipped"
    ])
    expect(ran.code).toBe(1)
  }, 30_000)

  it("--json escapes them too, and the reason parses back to what the target sent", async () => {
    const url = await hostileEcho()
    const ran = await accordConformance(["--url", `${url}/api`, ...tokens, "--only", "ACC-health-ok", "--json"])
    for (const control of RAW_CONTROLS) expect(ran.stdout.includes(control), JSON.stringify(control)).toBe(false)
    expect(reportOf(ran).results[0]?.reason).toBe(`GET health -> 418 ${HOSTILE}: expected status 200`)
    expect(ran.code).toBe(1)
  }, 30_000)
})

describe("accord-conformance against bodies a backtracking pattern would rescan", () => {
  it("a docs page of 1 MiB of unclosed tags and a problem body of 1 MiB of line feeds are judged, not hung on", async () => {
    const MIB = 1024 * 1024
    const server = createHttpServer((request, response) => {
      const docs = request.url === "/api/docs"
      const body = docs ? `<html>${"<a ".repeat(MIB / 3)}` : "\n".repeat(MIB)
      response
        .writeHead(docs ? 200 : 404, {
          "Content-Type": docs ? "text/html; charset=utf-8" : "application/problem+json; charset=utf-8",
          "Cache-Control": docs ? "no-cache" : "no-store",
          "X-Content-Type-Options": "nosniff",
          "X-Request-Id": "hostile"
        })
        .end(body)
    })
    const url = await listening(server)
    closers.push(() => new Promise((resolve) => server.close(() => resolve())))
    const ran = await accordConformance([
      "--url",
      `${url}/api`,
      ...tokens,
      "--only",
      "ACC-docs-page-local-assets,ACC-routes-unknown-404"
    ])
    // The page has no asset (no tag ends): judged on its other rules, whatever they find.
    expect(ran.stdout).toMatch(/^(PASS|FAIL) {2}SHOULD {2}ACC-docs-page-local-assets$/m)
    // The line feeds are no stack trace; the problem is no JSON.
    expect(ran.stdout).toMatch(/^FAIL {2}MUST {4}ACC-routes-unknown-404\n {6}.*: body is not JSON: /m)
    expect(ran.stdout).toMatch(/^\d passed, \d failed \(1 MUST, \d SHOULD\), 0 skipped$/m)
    expect(ran.code).toBe(1)
  }, 60_000)
})
