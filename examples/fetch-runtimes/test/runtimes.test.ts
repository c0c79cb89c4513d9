import { auditTarget, httpAudits, openEventStream, runAudits, type AuditResult } from "@accord/conformance/audits"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn, spawnSync, type ChildProcess } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { once } from "node:events"
import { connect } from "node:net"
import { fileURLToPath } from "node:url"
import { Miniflare } from "miniflare"
import { build } from "rolldown"
import workerBundle from "../rolldown.config.ts"

// The fetch adapter hosted as its README tells a user (src/), on each runtime it names: the contract's audits
// (every MUST passes) and the table of language tags (the same stored tag on every runtime; issue 21).

const exampleDir = fileURLToPath(new URL("../", import.meta.url))
const repoRoot = join(exampleDir, "../..")
const bin = (name: string) => join(repoRoot, "node_modules/.bin", name)

const tokens = {
  userToken: "u1-demo-token-7f3c9a",
  otherUserToken: "u2-demo-token-b41e02",
  clientToken: "web-demo-client-5d8e61"
}
/** What only a runner that seeded its own store can check: without `seeded` facts the runner skips these. */
const SEEDED = httpAudits.filter((audit) => audit.needs.includes("seeded")).map((audit) => audit.id)
const languageTags: { readonly cases: ReadonlyArray<{ readonly sent: string; readonly stored: string | null }> } =
  JSON.parse(readFileSync(join(repoRoot, "packages/core/test/fixtures/language-tags.json"), "utf8"))

interface Host {
  readonly url: string
  readonly stop: () => Promise<void>
  /** SIGTERM (the host drains); resolves with the exit code. Undefined where the platform owns the drain. */
  readonly terminate?: () => Promise<number | null>
}

/** Why `command --version` cannot run here, or undefined when it can. */
const cannotRun = (command: string, args: ReadonlyArray<string> = ["--version"]): string | undefined => {
  const ran = spawnSync(command, args, { encoding: "utf8", timeout: 30_000 })
  if (ran.error !== undefined) return `${command} ${args.join(" ")}: ${ran.error.message}`
  if (ran.status !== 0) return `${command} ${args.join(" ")} exited ${ran.status}: ${ran.stderr.trim()}`
  return undefined
}

/** Starts a host script on a free port; resolves with its URL once it prints `listening on URL`. */
const spawnHost = async (command: string, args: ReadonlyArray<string>): Promise<Host> => {
  const child: ChildProcess = spawn(command, args, {
    cwd: exampleDir,
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", HOST: "127.0.0.1", PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = ""
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
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
  const terminate = () =>
    new Promise<number | null>((resolve) => {
      if (child.exitCode !== null) return resolve(child.exitCode)
      child.on("exit", (code) => resolve(code))
      child.kill("SIGTERM")
    })
  return { url, stop, terminate }
}

/** Opens a connection and sends a PUT whose body is only half sent; `finish` sends the rest and reads the answer. */
const halfSentPut = async (url: string, language: string) => {
  const { hostname, port } = new URL(url)
  const socket = connect({ host: hostname, port: Number(port) })
  await once(socket, "connect")
  let wire = ""
  socket.setEncoding("utf8").on("data", (chunk: string) => (wire += chunk))
  // One whole exchange first: from then on the host has certainly accepted the connection, however busy the machine.
  socket.write(`GET /api/health HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`)
  while (!wire.includes('{"status":"ok"}')) await once(socket, "data")
  wire = ""
  const body = JSON.stringify({ language })
  const half = Math.floor(body.length / 2)
  socket.write(
    `PUT /api/users/v1/preferences/language/ HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
      `Authorization: Bearer ${tokens.userToken}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, half)}`
  )
  const closed = once(socket, "close").then(() => wire)
  socket.on("error", () => undefined)
  return {
    finish: async () => {
      if (!socket.destroyed) socket.write(body.slice(half))
      return closed
    }
  }
}

/** src/worker.ts bundled as `npm run worker:bundle` does (rolldown.config.ts), served by workerd. */
const startWorker = async (): Promise<Host> => {
  const bundle = await build({ ...workerBundle, write: false })
  const script = bundle.output[0].code
  const miniflare = new Miniflare({
    modules: true,
    script,
    compatibilityDate: "2026-07-01",
    compatibilityFlags: ["nodejs_compat"],
    host: "127.0.0.1",
    port: 0
  })
  const url = await miniflare.ready
  return { url: url.origin, stop: () => miniflare.dispose() }
}

interface Runtime {
  readonly name: string
  /** Why it cannot run here, or undefined. */
  readonly unavailable: string | undefined
  /**
   * MUST audits the runtime itself fails, before the handler is called (so neither the adapter nor the host can
   * change it), with the bare answer it gives instead: the README's "Runtimes" section lists them.
   */
  readonly runtimeOwned: Readonly<Record<string, RegExp>>
  /** Why the host has no drain of its own to test, or undefined. */
  readonly noHostDrain?: string
  readonly start: () => Promise<Host>
}

const runtimes: ReadonlyArray<Runtime> = [
  {
    name: "Bun (Bun.serve, src/bun.ts)",
    unavailable: cannotRun(bin("bun")),
    // Bun's HTTP parser refuses `Transfer-Encoding: gzip, chunked` itself: a bare 400, the body never read.
    runtimeOwned: { "ACC-transfer-coding-501": /got "HTTP\/1\.1 400 Bad Request\\r\\nConnection: close\\r\\n\\r\\n"/ },
    start: () => spawnHost(bin("bun"), ["src/bun.ts"])
  },
  {
    name: "Deno (Deno.serve, src/deno.ts)",
    unavailable: cannotRun(bin("deno")),
    runtimeOwned: {},
    start: () => spawnHost(bin("deno"), ["run", "--allow-env", "--allow-net", "--allow-read", "src/deno.ts"])
  },
  {
    name: "workerd (miniflare, nodejs_compat, src/worker.ts)",
    unavailable: cannotRun(bin("workerd")),
    // workerd refuses `Transfer-Encoding: gzip, chunked` itself ("unknown transfer encoding"): a bare 500.
    runtimeOwned: { "ACC-transfer-coding-501": /got "HTTP\/1\.1 500 Internal Server Error\\r\\n/ },
    noHostDrain: "on Workers the platform owns the drain",
    start: startWorker
  }
]

const putLanguage = async (url: string, language: string) => {
  const response = await fetch(`${url}/api/users/v1/preferences/language/`, {
    method: "PUT",
    headers: { authorization: `Bearer ${tokens.userToken}`, "content-type": "application/json" },
    body: JSON.stringify({ language })
  })
  const body = (await response.json()) as { readonly language?: string }
  return response.status === 200 ? (body.language ?? "(no language)") : response.status === 400 ? null : response
}

const storedTags = new Map<string, ReadonlyArray<string | null>>()

for (const runtime of runtimes) {
  const title =
    runtime.unavailable === undefined
      ? runtime.name
      : `${runtime.name}: skipped, it cannot run here (${runtime.unavailable})`
  describe.skipIf(runtime.unavailable !== undefined)(title, () => {
    let host: Host | undefined
    beforeAll(async () => {
      host = await runtime.start()
    }, 60_000)
    afterAll(async () => {
      await host?.stop()
    })

    it("passes every MUST of the contract's audits", async () => {
      const url = host?.url ?? ""
      const results = await runAudits(
        httpAudits,
        auditTarget({ url: `${url}/api`, ...tokens, corsOrigin: "https://app.example.com" })
      )
      const idsWith = (status: AuditResult["status"], level?: AuditResult["level"]) =>
        results
          .filter((result) => result.status === status && (level === undefined || result.level === level))
          .map((result) => result.id)
      const failed = results.filter((result) => result.status === "fail" && result.level === "MUST")
      const reasons = failed.map((result) => `${result.id}: ${result.reason ?? ""}`).join("\n")
      expect(
        failed.map((result) => result.id),
        `every MUST passes but those the runtime answers itself:\n${reasons}`
      ).toEqual(Object.keys(runtime.runtimeOwned))
      for (const result of failed) expect(result.reason).toMatch(runtime.runtimeOwned[result.id] ?? "")
      expect(idsWith("skip")).toEqual(SEEDED)
      expect(results.filter((result) => result.status === "pass").length).toBeGreaterThan(50)
    }, 90_000)

    it("a declared Content-Length of 1 GiB is the core's 413 problem, not the runtime's own refusal", async () => {
      // Bun refuses a declared length over its `maxRequestBodySize` (128 MiB by default) itself, with a bare 413:
      // src/bun.ts lifts it, and the core refuses at its own bodyLimit (docs/api.md, "Precise rules").
      const target = auditTarget({ url: `${host?.url ?? ""}/api`, ...tokens })
      const response = await target.send({
        method: "PUT",
        path: target.paths.preferences,
        headers: { authorization: `Bearer ${tokens.userToken}`, "content-type": "application/json" },
        body: '{"language":"de"',
        declaredLength: 2 ** 30,
        timeoutMs: 5000
      })
      expect(response.status).toBe(413)
      expect(response.headers["content-type"]).toBe("application/problem+json; charset=utf-8")
      expect(response.headers["x-request-id"]).toMatch(/\S/)
      expect(JSON.parse(response.body.toString("utf8"))).toMatchObject({ status: 413, code: "payload_too_large" })
    })

    const drainTitle = "drain: SIGTERM while PUT bodies are still arriving answers every one of them"
    it.skipIf(runtime.noHostDrain !== undefined)(
      runtime.noHostDrain === undefined ? drainTitle : `${drainTitle}: skipped, ${runtime.noHostDrain}`,
      async () => {
        const draining = await runtime.start()
        try {
          const puts = await Promise.all(["de", "fr", "it"].map((language) => halfSentPut(draining.url, language)))
          // Every request is in the handler, waiting for the rest of its body, when the host is told to stop.
          await new Promise((resolve) => setTimeout(resolve, 300))
          const exited = draining.terminate?.()
          await new Promise((resolve) => setTimeout(resolve, 300))
          const answers = await Promise.all(puts.map((put) => put.finish()))
          expect(answers.map((wire) => wire.split("\r\n")[0])).toEqual(Array(3).fill("HTTP/1.1 200 OK"))
          expect(await exited).toBe(0)
        } finally {
          await draining.stop()
        }
      },
      30_000
    )

    const streamDrainTitle = "drain: SIGTERM with an events stream open ends the stream after its last block and exits"
    it.skipIf(runtime.noHostDrain !== undefined)(
      runtime.noHostDrain === undefined ? streamDrainTitle : `${streamDrainTitle}: skipped, ${runtime.noHostDrain}`,
      async () => {
        const draining = await runtime.start()
        try {
          const stream = await openEventStream(auditTarget({ url: `${draining.url}/api`, ...tokens }), tokens.userToken)
          expect(stream.status).toBe(200)
          expect((await stream.next())?.retry).toBe("2000")
          const exited = draining.terminate?.()
          // The stream ends (undefined) rather than the host waiting on it: before, neither host ever exited.
          for (let block = await stream.next(); block !== undefined; block = await stream.next())
            expect(block.data === undefined || block.id !== undefined).toBe(true)
          expect(await exited).toBe(0)
        } finally {
          await draining.stop()
        }
      },
      60_000
    )

    it("stores every tag of the language table as the table says (400 where it says null)", async () => {
      const url = host?.url ?? ""
      const stored: Array<string | null> = []
      for (const { sent } of languageTags.cases) {
        const outcome = await putLanguage(url, sent)
        if (outcome instanceof Response) throw new Error(`PUT ${sent}: ${outcome.status}`)
        stored.push(outcome)
      }
      storedTags.set(runtime.name, stored)
      expect(
        languageTags.cases.map(({ sent }, index) => [sent, stored[index]]),
        runtime.name
      ).toEqual(languageTags.cases.map(({ sent, stored }) => [sent, stored]))
    }, 60_000)
  })
}

describe("the language table across runtimes", () => {
  it("Node (src/accord.ts's fetch, called in-process) stores the table's tags too", async () => {
    const { default: accord, runtime } = await import("../src/accord.ts")
    try {
      const stored: Array<string | null> = []
      for (const { sent } of languageTags.cases) {
        const body = JSON.stringify({ language: sent })
        const response = await accord.fetch(
          new Request("http://node.test/api/users/v1/preferences/language/", {
            method: "PUT",
            headers: {
              authorization: `Bearer ${tokens.userToken}`,
              "content-type": "application/json",
              // A Request built in code declares no length of its own (the adapter's README, "How it translates").
              "content-length": String(Buffer.byteLength(body))
            },
            body
          })
        )
        const answer = (await response.json()) as { readonly language?: string }
        stored.push(
          response.status === 200
            ? (answer.language ?? "(no language)")
            : response.status === 400
              ? null
              : `${response.status}`
        )
      }
      storedTags.set("Node", stored)
      expect(stored).toEqual(languageTags.cases.map(({ stored }) => stored))
    } finally {
      await runtime.dispose()
    }
  })

  it("every runtime that ran stored the same tags", () => {
    expect(storedTags.size, [...storedTags.keys()].join(", ")).toBeGreaterThan(1)
    const [first, ...rest] = [...storedTags.values()]
    for (const stored of rest) expect(stored).toEqual(first)
  })
})
