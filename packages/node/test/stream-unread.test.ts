import type { StreamedBody } from "@accord/core"
import { writeNodeResponse } from "@accord/node/bridge"
import { describe, expect, it } from "@effect/vitest"
import { createServer, get, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

// docs/SECURITY.md item 44: a client that does not read its event stream makes Node hold what is written to it; past
// the stream's `maxUnsentBytes` the bridge closes the connection and stops the stream (the client resumes by its id).

const CHUNK = "x".repeat(64)
const BOUND = 4096

/** A stream writing a chunk each turn of the event loop until stopped or `limit` chunks; `corked` holds them in Node. */
const run = async (corked: boolean, limit: number) => {
  let written = 0
  let stopped = false
  let received = 0
  const server = createServer((request, response: ServerResponse) => {
    const stream: StreamedBody = {
      maxUnsentBytes: BOUND,
      start: (write, end) => {
        const tick = (): void => {
          if (stopped) return
          if (written === limit) return end()
          if (written === 1 && corked) response.cork() // the head went out: what follows stays in Node, unread
          write(CHUNK)
          written += 1
          setImmediate(tick)
        }
        tick()
        return () => void (stopped = true)
      }
    }
    writeNodeResponse(request, response, {
      status: 200,
      headers: { "content-type": "text/event-stream" },
      body: undefined,
      stream
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  const outcome = await new Promise<string>((resolve) => {
    get({ host: "127.0.0.1", port, path: "/" }, (response) => {
      response.on("data", (chunk: Buffer) => void (received += chunk.length))
      response.on("end", () => resolve("ended"))
      response.on("error", () => resolve("closed"))
      response.on("aborted", () => resolve("closed"))
    }).on("error", () => resolve("closed"))
  })
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return { outcome, written, stopped, received }
}

describe("an event stream on the Node bridge, against a client's unread bytes", () => {
  it("a client that reads gets every chunk, however many the bound's worth", async () => {
    const limit = (4 * BOUND) / CHUNK.length
    const read = await run(false, limit)
    expect(read).toEqual({ outcome: "ended", written: limit, stopped: false, received: limit * CHUNK.length })
  })

  it("a client whose bytes stay unread past the bound is closed, and its stream stopped", async () => {
    // Unbounded, it would run to the limit: a hundred times the bound.
    const limit = (100 * BOUND) / CHUNK.length
    const unread = await run(true, limit)
    expect(unread.outcome).toBe("closed")
    expect(unread.stopped).toBe(true)
    expect(unread.written).toBeLessThanOrEqual(BOUND / CHUNK.length + 2)
  })
})
