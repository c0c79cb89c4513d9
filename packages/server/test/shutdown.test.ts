import { describe, expect, it } from "@effect/vitest"
import {
  CLIENT_TOKEN,
  healthRequest,
  openConnection,
  spawnCli,
  USER_TOKEN,
  useBuiltServerAndSeed
} from "./cli-helpers.js"

const suite = useBuiltServerAndSeed()

const IN_FLIGHT = 200
const DRAIN_TIMEOUT_MS = 20_000

/** The three kinds of request held in flight, one connection each. */
type Kind = "plan entry" | "plan entry, body half-sent" | "preferences, body half-sent"
const kindOf = (index: number): Kind =>
  index % 4 === 0 ? "plan entry, body half-sent" : index % 4 === 1 ? "preferences, body half-sent" : "plan entry"

const bodyOf = (kind: Kind, index: number): string =>
  kind === "preferences, body half-sent"
    ? JSON.stringify({ timezone: (index % 8) * 15 })
    : JSON.stringify({ email: `drain-${index}@Example.com`, password: `drain-Passw0rd-${index}` })

const head = (kind: Kind, body: string): string =>
  (kind === "preferences, body half-sent"
    ? `PUT /api/users/v1/preferences/language/ HTTP/1.1\r\nAuthorization: Bearer ${USER_TOKEN}\r\n`
    : `POST /api/plans/v1/subscription-plans/public/ HTTP/1.1\r\nAuthorization: Bearer ${CLIENT_TOKEN}\r\n`) +
  `Host: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`

interface WireResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** Every response in what one connection received, in order (bodies are JSON, never a status line). */
const responsesIn = (wire: string): ReadonlyArray<WireResponse> =>
  wire
    .split(/(?=HTTP\/1\.1 \d{3} )/)
    .filter((part) => part !== "")
    .map((part) => {
      const end = part.indexOf("\r\n\r\n")
      const [statusLine = "", ...lines] = part.slice(0, end).split("\r\n")
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()])
      )
      return { status: Number(statusLine.split(" ")[1]), headers, body: part.slice(end + 4) }
    })

describe.each(["fastify", "koa", "express", "fetch"] as const)(
  `SIGTERM with ${IN_FLIGHT} requests in flight: --adapter %s`,
  (adapter) => {
    it("answers every in-flight request completely, refuses new connections, exits 0 without reaching the drain limit", async () => {
      const cli = spawnCli(
        ["--adapter", adapter, "--port", "0", "--seed", suite.seedPath, "--drain-timeout-ms", String(DRAIN_TIMEOUT_MS)],
        {
          // Hashing slow enough to keep plan entries in flight for a while, and room for all of them in its queue.
          SCRYPT_N: "4096",
          SCRYPT_P: "1",
          SCRYPT_MAX_QUEUED: String(IN_FLIGHT)
        }
      )
      const url = await cli.listening

      const connections = await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          const connection = await openConnection(url)
          // A complete exchange first: from then on the connection is certainly accepted.
          connection.send(healthRequest)
          await connection.received('{"status":"ok"}')
          return connection
        })
      )

      let signalled = false
      const requests = connections.map((connection, index) => {
        const kind = kindOf(index)
        const body = bodyOf(kind, index)
        const whole = kind === "plan entry"
        connection.send(head(kind, body) + (whole ? body : body.slice(0, 3)))
        // The end of the answer's body (the health answer before it ends differently).
        const request = { connection, kind, body, whole, answeredBeforeSignal: false, answered: Promise.resolve() }
        request.answered = connection
          .received(kind === "preferences, body half-sent" ? '"updated_at"' : '"password":"********"}')
          .then(
            () => {
              request.answeredBeforeSignal = !signalled
            },
            () => undefined
          )
        return request
      })

      // Hashing is under way once the first plan entry is answered; most requests are still waiting for theirs.
      await Promise.race(requests.filter((request) => request.whole).map((request) => request.answered))
      signalled = true
      cli.child.kill("SIGTERM")
      await cli.logged("draining")

      const refused = await fetch(`${url}/api/health`).then(
        () => undefined,
        (error: unknown) =>
          error instanceof Error && error.cause instanceof Error
            ? (error.cause as Error & { code?: string }).code
            : String(error)
      )
      expect(refused).toBe("ECONNREFUSED")

      for (const request of requests) if (!request.whole) request.connection.send(request.body.slice(3))
      const received = await Promise.all(requests.map((request) => request.connection.closed))
      const exited = await cli.exited

      // The half-sent ones alone are half of them; they could not be answered before the signal.
      const inFlightAtSignal = requests.filter((request) => !request.answeredBeforeSignal).length
      expect(inFlightAtSignal).toBeGreaterThanOrEqual(IN_FLIGHT / 2)
      received.forEach((wire, index) => {
        const request = requests[index]
        const responses = responsesIn(wire)
        expect(responses.map((response) => response.status)).toEqual([
          200,
          request?.kind === "preferences, body half-sent" ? 200 : 201
        ])
        const answer = responses[1]
        expect(answer?.headers["content-length"]).toBe(String(Buffer.byteLength(answer?.body ?? "")))
        // Those whose bodies came after the signal were answered during the drain, so told not to reuse the connection.
        // (A whole one may have been answered just before the server took the signal, with keep-alive.)
        if (request?.whole === false) expect(answer?.headers["connection"]).toBe("close")
        const json = JSON.parse(answer?.body ?? "") as Record<string, unknown>
        if (request?.kind === "preferences, body half-sent")
          expect(json).toMatchObject({ language: "en", mfa_enabled: false })
        else expect(json).toEqual({ email: `drain-${index}@example.com`, password: "********" })
      })
      expect(exited).toEqual({ code: 0, signal: null })
      // It ended by itself, every request answered, not at the drain limit (which would have said so).
      expect(cli.logLines().map((line) => line["msg"])).not.toContain(
        "drain limit reached; closing the connections still open"
      )
      const statuses = cli
        .logLines()
        .filter((line) => line["msg"] === "request")
        .map((line) => line["status"])
      expect(statuses.filter((status) => status !== 200 && status !== 201)).toEqual([])
      expect(statuses).toHaveLength(2 * IN_FLIGHT)
    }, 60_000)
  }
)

describe("a stderr nobody reads any more", () => {
  it("still drains and exits 0 on SIGTERM (the log's exit flush gives up on a closed pipe)", async () => {
    const cli = spawnCli(["--port", "0"])
    try {
      const url = await cli.listening
      expect((await fetch(`${url}/api/health`)).status).toBe(200)
      // What a supervisor whose log reader died leaves behind: both pipes closed on the reading side.
      cli.child.stdout?.destroy()
      cli.child.stderr?.destroy()
      cli.child.kill("SIGTERM")
      const exited = await Promise.race([
        cli.exited,
        new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), 10_000))
      ])
      expect(exited).toEqual({ code: 0, signal: null })
    } finally {
      if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill("SIGKILL")
    }
  })
})
