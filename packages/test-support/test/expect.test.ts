import type { RunningServer } from "@accord/node/server"
import { startExpressServer } from "@accord/adapter-express"
import { startFastifyServer } from "@accord/adapter-fastify"
import { startFetchServer } from "@accord/adapter-fetch/node"
import { startKoaServer } from "@accord/adapter-koa"
import { exchange } from "@accord/conformance"
import { startWith, type StartAdapter } from "@accord/test-support"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { connect } from "node:net"

// docs/SECURITY.md, item 16: 100 Continue only for a body the core reads; other expectations and a missing Host are
// the core's problems.

const USER = "expect-user-token"
const seed = { users: [{ id: "expect_u1", token: USER }] }
const preferences = "PUT /api/users/v1/preferences/language/ HTTP/1.1\r\nHost: expect\r\n"
const body = '{"language":"en"}'
const upload = (extra: string): string =>
  `${preferences}${extra}Content-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`

/**
 * Sends the head, waits for the server's first answer head (a 100 Continue, or a refusal made without waiting for the
 * body), sends the body, and resolves once `done` holds for what came back, or the connection closed. Events, not a
 * quiet time: a busy server is slow, never silent.
 */
const headThenBody = (
  baseUrl: string,
  head: string,
  done: (wire: string) => boolean = () => false
): Promise<{ beforeBody: string; wire: string }> =>
  new Promise((resolve) => {
    const url = new URL(baseUrl)
    const socket = connect(Number(url.port), url.hostname)
    let wire = ""
    let beforeBody: string | undefined
    const finish = (): void => {
      socket.destroy()
      resolve({ beforeBody: beforeBody ?? wire, wire })
    }
    socket.on("data", (data) => {
      wire += data.toString("latin1")
      if (beforeBody === undefined && wire.includes("\r\n\r\n")) {
        beforeBody = wire
        if (!socket.destroyed) socket.write(body)
      }
      if (beforeBody !== undefined && done(wire)) finish()
    })
    socket.on("error", () => undefined)
    socket.on("close", finish)
    socket.write(head)
  })

/** The problem a refusal made before the handler must be: the core's body and common headers, then the close. */
const expectProblem = (wire: string, status: number, reason: string, code: string): void => {
  const end = wire.indexOf("\r\n\r\n")
  const [statusLine = "", ...lines] = wire.slice(0, end).split("\r\n")
  expect(statusLine).toBe(`HTTP/1.1 ${status} ${reason}`)
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()])
  )
  expect(headers).toMatchObject({
    "content-type": "application/problem+json; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    connection: "close"
  })
  expect(headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/)
  const problem = JSON.parse(wire.slice(end + 4)) as Record<string, unknown>
  expect(Object.keys(problem)).toEqual(["type", "title", "status", "detail", "code"])
  expect(problem).toMatchObject({ type: "about:blank", title: reason, status, code })
}

describe.each<readonly [string, StartAdapter]>([
  ["koa", startKoaServer],
  ["fastify", startFastifyServer],
  ["express", startExpressServer],
  ["fetch", startFetchServer]
])("Expect and Host: %s", (_name, start) => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startWith(start)(seed)
  })
  afterAll(() => server.close())

  it("Expect: 100-continue: a refused upload (401, 415, 413) is answered at once, with no 100 Continue", async () => {
    for (const [extra, status] of [
      ["Content-Type: application/json\r\n", 401],
      [`Authorization: Bearer ${USER}\r\nContent-Type: text/plain\r\n`, 415]
    ] as const) {
      const { beforeBody } = await headThenBody(server.url, upload(extra))
      expect(beforeBody).not.toContain("100 Continue")
      expect(beforeBody).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `))
    }
    const tooLarge = await headThenBody(
      server.url,
      `${preferences}Authorization: Bearer ${USER}\r\nContent-Type: application/json\r\nContent-Length: 99999\r\nExpect: 100-continue\r\n\r\n`
    )
    expect(tooLarge.beforeBody).not.toContain("100 Continue")
    expect(tooLarge.beforeBody).toMatch(/^HTTP\/1\.1 413 /)
  })

  it("Expect: 100-continue: 100 Continue once the core reads the body, then the answer", async () => {
    const { beforeBody, wire } = await headThenBody(
      server.url,
      upload(`Authorization: Bearer ${USER}\r\nContent-Type: application/json\r\n`),
      (wire) => /"language":"en"[^]*\}$/.test(wire)
    )
    expect(beforeBody).toBe("HTTP/1.1 100 Continue\r\n\r\n")
    expect(wire.slice(beforeBody.length)).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*"language":"en"/)
  })

  it("another expectation is 417 expectation_failed as a problem, and the connection closed", async () => {
    const answered = await exchange(
      server.url,
      `${preferences}Authorization: Bearer ${USER}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: foo\r\n\r\n`
    )
    expectProblem(answered.wire, 417, "Expectation Failed", "expectation_failed")
    expect(answered.closed).toBe(true)
  })

  it("HTTP/1.1 without Host is 400 bad_request as a problem, and the connection closed", async () => {
    const answered = await exchange(server.url, "GET /api/health HTTP/1.1\r\n\r\n")
    expectProblem(answered.wire, 400, "Bad Request", "bad_request")
    expect(answered.closed).toBe(true)
  })
})
