import { auditTarget, eventStreamAudits, runAudits } from "@accord/conformance/audits"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn, spawnSync } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Miniflare } from "miniflare"
import { build } from "rolldown"
import workerBundle from "../rolldown.config.ts"
import { fetch as nodeFetchHandler, HEARTBEAT_MS, runtime } from "./fixtures/stream-accord.ts"

// Issue 39 on the runtimes the fetch adapter names: the events stream served by Bun's, Deno's and workerd's own
// servers (test/fixtures/stream-host.ts, stream-worker.ts; a heartbeat of HEARTBEAT_MS), under the stream's audits,
// and its bytes (retry, the replay after Last-Event-ID, a live event while the stream stays open, a heartbeat) the
// same as the handler's on Node. A runtime that buffered the body would hold the live event back: the read times out.

const exampleDir = fileURLToPath(new URL("../", import.meta.url))
const bin = (name: string) => join(exampleDir, "../../node_modules/.bin", name)
const tokens = {
  userToken: "u1-demo-token-7f3c9a",
  otherUserToken: "u2-demo-token-b41e02",
  clientToken: "web-demo-client-5d8e61"
}
const auth = { authorization: `Bearer ${tokens.userToken}` }
const EVENTS = "/api/users/v1/events/"
const PREFERENCES = "/api/users/v1/preferences/language/"

type Fetch = (request: Request) => Promise<Response>
interface Host {
  readonly fetch: Fetch
  readonly url: string
  readonly stop: () => Promise<void>
}

/** Why `command --version` cannot run here, or undefined when it can. */
const cannotRun = (command: string): string | undefined => {
  const ran = spawnSync(command, ["--version"], { encoding: "utf8", timeout: 30_000 })
  if (ran.error !== undefined) return `${command} --version: ${ran.error.message}`
  if (ran.status !== 0) return `${command} --version exited ${ran.status}: ${ran.stderr.trim()}`
  return undefined
}

/** The runtime's own fetch against `url` (a real connection), as a handler. */
const over =
  (url: string): Fetch =>
  (request) => {
    const at = new URL(request.url)
    return globalThis.fetch(new Request(url + at.pathname + at.search, request))
  }

const spawnHost = async (command: string, args: ReadonlyArray<string>): Promise<Host> => {
  const child = spawn(command, [...args, "test/fixtures/stream-host.ts"], {
    cwd: exampleDir,
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
      const listening = /listening on (http:\/\/\S+)/.exec(stdout)
      if (listening?.[1] !== undefined) resolve(listening[1])
    })
    child.on("exit", (code) => reject(new Error(`${command} exited (${code}) before listening:\n${stderr}`)))
  })
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve()
      child.on("exit", () => resolve())
      child.kill("SIGTERM")
    })
  return { url, fetch: over(url), stop }
}

const startWorker = async (): Promise<Host> => {
  const bundle = await build({
    ...workerBundle,
    input: fileURLToPath(new URL("fixtures/stream-worker.ts", import.meta.url)),
    write: false
  })
  const miniflare = new Miniflare({
    modules: true,
    script: bundle.output[0].code,
    compatibilityDate: "2026-07-01",
    compatibilityFlags: ["nodejs_compat"],
    host: "127.0.0.1",
    port: 0
  })
  const url = (await miniflare.ready).origin
  return { url, fetch: over(url), stop: () => miniflare.dispose() }
}

const runtimes = [
  { name: "Bun (Bun.serve)", unavailable: cannotRun(bin("bun")), start: () => spawnHost(bin("bun"), []) },
  {
    name: "Deno (Deno.serve)",
    unavailable: cannotRun(bin("deno")),
    start: () => spawnHost(bin("deno"), ["run", "--allow-env", "--allow-net", "--allow-read"])
  },
  { name: "workerd (miniflare, nodejs_compat)", unavailable: cannotRun(bin("workerd")), start: startWorker }
] as const

/** Reads a stream's body as text, a chunk at a time, until `until` holds or `waitMs` passes. */
const reading = (body: ReadableStream<Uint8Array>) => {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let text = ""
  return {
    get text() {
      return text
    },
    until: async (done: (text: string) => boolean, waitMs = 20_000): Promise<string> => {
      const deadline = Date.now() + waitMs
      while (!done(text)) {
        const left = deadline - Date.now()
        if (left <= 0) throw new Error(`not within ${waitMs} ms; read so far: ${JSON.stringify(text)}`)
        let timer: ReturnType<typeof setTimeout> | undefined
        const read = await Promise.race([
          reader.read(),
          new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), left)))
        ]).finally(() => clearTimeout(timer))
        if (read === "late") continue
        if (read.done) throw new Error(`the stream ended; read: ${JSON.stringify(text)}`)
        text += decoder.decode(read.value, { stream: true })
      }
      return text
    },
    cancel: () => reader.cancel()
  }
}

const putTimezone = async (fetch: Fetch, timezone: number) => {
  const response = await fetch(
    new Request(`http://host${PREFERENCES}`, {
      method: "PUT",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ timezone })
    })
  )
  expect(response.status).toBe(200)
  await response.arrayBuffer()
}

/** The caller's feed's last `count` elements, as the JSON feed has them: their ids and their bytes. */
const feedTail = async (fetch: Fetch, count: number) => {
  const response = await fetch(new Request(`http://host${EVENTS}?limit=100`, { headers: auth }))
  const { data } = (await response.json()) as { readonly data: ReadonlyArray<{ readonly id: string }> }
  return data.slice(-count).map((item) => ({ id: item.id, block: `id: ${item.id}\ndata: ${JSON.stringify(item)}\n\n` }))
}

interface StreamBytes {
  /** The head and the replay, from the first byte. */
  readonly opening: string
  /** What came while the stream stayed open after the change. */
  readonly live: string
  readonly heartbeat: string
  readonly contentType: string | null
}

/**
 * Two changes, a stream from the first one's id (the replay: the second), a third change while it stays open, then
 * the idle time until a heartbeat: the bytes at each step, checked against the JSON feed's elements.
 */
const streamBytes = async (fetch: Fetch): Promise<StreamBytes> => {
  await putTimezone(fetch, 15)
  await putTimezone(fetch, 30)
  const [first, second] = await feedTail(fetch, 2)
  const response = await fetch(
    new Request(`http://host${EVENTS}`, {
      headers: { ...auth, accept: "text/event-stream", "last-event-id": first?.id ?? "" }
    })
  )
  expect(response.status).toBe(200)
  if (response.body === null) throw new Error("no body")
  const body = reading(response.body)
  try {
    const expectedOpening = `retry: 2000\n\n${second?.block ?? ""}`
    const opening = await body.until((text) => text.length >= expectedOpening.length)
    expect(opening).toBe(expectedOpening)
    await putTimezone(fetch, 60)
    const [third] = await feedTail(fetch, 1)
    // Heartbeats may come between: the live event is the block after the replay that carries data.
    const withLive = await body.until((text) => text.includes(third?.block ?? "\u0000"))
    const live = withLive.slice(opening.length).replaceAll(": heartbeat\n\n", "")
    expect(live).toBe(third?.block)
    const before = withLive.length
    // One comes every HEARTBEAT_MS; the wait is generous for a busy machine.
    const withHeartbeat = await body.until((text) => text.slice(before).includes(": heartbeat\n\n"), HEARTBEAT_MS * 40)
    // The ids and the times are each store's own: placeholders, so that the rest compares byte for byte.
    const anonymous = (text: string) =>
      text
        .replaceAll(first?.id ?? "", "<first>")
        .replaceAll(second?.id ?? "", "<second>")
        .replaceAll(third?.id ?? "", "<third>")
        .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "<time>")
    return {
      opening: anonymous(opening),
      live: anonymous(live),
      heartbeat: withHeartbeat.slice(before),
      contentType: response.headers.get("content-type")
    }
  } finally {
    await body.cancel()
  }
}

const onNode: { bytes?: StreamBytes } = {}

describe("the events stream on Node (the fetch handler called in process)", () => {
  afterAll(() => runtime.dispose())
  it("retry, the replay after Last-Event-ID, a live event while open, a heartbeat", async () => {
    // A Request built in code declares no length of its own (the adapter's README, "How it translates"): a runtime's
    // server sets it from the wire, so here the test does.
    const withLength: Fetch = async (request) => {
      if (request.body === null) return nodeFetchHandler(request)
      const body = await request.arrayBuffer()
      const headers = new Headers(request.headers)
      headers.set("content-length", String(body.byteLength))
      return nodeFetchHandler(new Request(request.url, { method: request.method, headers, body }))
    }
    onNode.bytes = await streamBytes(withLength)
    expect(onNode.bytes.heartbeat).toBe(": heartbeat\n\n")
  }, 30_000)
})

for (const runtime of runtimes) {
  const title =
    runtime.unavailable === undefined
      ? `the events stream on ${runtime.name}`
      : `the events stream on ${runtime.name}: skipped, it cannot run here (${runtime.unavailable})`
  describe.skipIf(runtime.unavailable !== undefined)(title, () => {
    let host: Host | undefined
    beforeAll(async () => {
      host = await runtime.start()
    }, 60_000)
    afterAll(async () => {
      await host?.stop()
    })

    it("the same bytes as on Node: retry, the replay, a live event flushed while open, a heartbeat", async () => {
      if (host === undefined) throw new Error("not started")
      const bytes = await streamBytes(host.fetch)
      expect(bytes.contentType).toBe("text/event-stream")
      // Byte for byte Node's, but for the ids and times (the seed and the changes are the same).
      expect(onNode.bytes, "the Node test ran first").toBeDefined()
      expect(bytes).toEqual(onNode.bytes)
    }, 30_000)

    it(`passes the stream's audits (${eventStreamAudits.map((audit) => audit.id).join(", ")})`, async () => {
      const results = await runAudits(eventStreamAudits, auditTarget({ url: `${host?.url ?? ""}/api`, ...tokens }))
      const failed = results.filter((result) => result.status !== "pass")
      expect(failed.map((result) => `${result.id}: ${result.status} ${result.reason ?? ""}`)).toEqual([])
      expect(results.length).toBe(eventStreamAudits.length)
    }, 120_000)
  })
}
