import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn, spawnSync, type ChildProcess } from "node:child_process"
import { existsSync } from "node:fs"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"

/**
 * A smoke of the fetch handler on Bun and Deno, served by their own servers (test/runtimes/host.ts): a PUT of the
 * language preferences and a GET of them. The binaries are the root devDependencies `bun` and `deno` (npm packages
 * that ship them); the full runtime suite is issue 21's. By hand: `cd packages/adapter-fetch/test/runtimes &&
 * ../../../../node_modules/.bin/bun run host.ts` (or `.../deno run --allow-net=127.0.0.1 host.ts`), then curl the URL.
 */

const HOST = fileURLToPath(new URL("./runtimes/host.ts", import.meta.url))
const bin = (name: string) => fileURLToPath(new URL(`../../../node_modules/.bin/${name}`, import.meta.url))
// The host's seeded user (host.ts, RUNTIME_TOKEN): not imported, which would run the host here.
const auth = { authorization: "Bearer runtime-smoke-token" }
const preferences = "/api/users/v1/preferences/language/"

const runtimes = [
  { name: "Bun", binary: bin("bun"), args: ["run", HOST] },
  // Deno asks for nothing but the loopback listener.
  { name: "Deno", binary: bin("deno"), args: ["run", "--allow-net=127.0.0.1", HOST] }
] as const

/**
 * Why a runtime's binary cannot run, or undefined when it answers `--version`: missing, or left a placeholder (npm's
 * `--ignore-scripts` skips the postinstall that puts Bun's binary in place).
 */
const unavailable = (binary: string): string | undefined => {
  if (!existsSync(binary)) return `skipped: ${binary} is missing (npm install)`
  const version = spawnSync(binary, ["--version"], { encoding: "utf8", timeout: 30_000 })
  if (version.status === 0) return undefined
  const said = `${version.stderr}`.split("\n")[0]?.trim() || `exit ${String(version.status)}`
  return `skipped: ${binary} --version failed (${said})`
}

/** The first line the host prints (its URL); rejects if it exits or stays silent for 30 s first. */
const urlOf = (child: ChildProcess): Promise<string> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the host printed no URL within 30 s")), 30_000)
    child.once("exit", (code) => reject(new Error(`the host exited (${code}) before printing its URL`)))
    if (child.stdout === null) return reject(new Error("no stdout"))
    createInterface({ input: child.stdout }).once("line", (line) => {
      clearTimeout(timer)
      resolve(line.trim())
    })
  })

for (const runtime of runtimes) {
  const skipReason = unavailable(runtime.binary)
  describe.skipIf(skipReason !== undefined)(
    `the fetch handler on ${runtime.name}${skipReason === undefined ? "" : ` (${skipReason})`}`,
    () => {
      let child: ChildProcess | undefined
      let url = ""
      let stderr = ""

      beforeAll(async () => {
        child = spawn(runtime.binary, runtime.args, { stdio: ["ignore", "pipe", "pipe"] })
        child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
        url = await urlOf(child).catch((error: unknown) => {
          throw new Error(`${String(error)}\n${stderr}`)
        })
      })
      afterAll(() => {
        child?.kill()
      })

      it("PUT language preferences, then GET them: the core's status, headers and body", async () => {
        const body = '{"language":"DE-at","timezone":60}'
        const put = await fetch(url + preferences, {
          method: "PUT",
          headers: { ...auth, "content-type": "application/json", "x-request-id": "runtime-smoke" },
          body
        })
        expect(put.status).toBe(200)
        expect(put.headers.get("content-type")).toBe("application/json; charset=utf-8")
        expect(put.headers.get("cache-control")).toBe("no-store")
        expect(put.headers.get("x-request-id")).toBe("runtime-smoke")
        expect(await put.json()).toMatchObject({ language: "de-AT", timezone: 60 })
        const get = await fetch(url + preferences, { headers: auth })
        expect(get.status).toBe(200)
        expect(await get.json()).toMatchObject({ language: "de-AT", timezone: 60, mfa_enabled: false })
      })

      it("a chunked body (no Content-Length) is read from the stream: 200 under the limit, 413 past it", async () => {
        const chunked = (parts: ReadonlyArray<string>) =>
          fetch(url + preferences, {
            method: "PUT",
            headers: { ...auth, "content-type": "application/json" },
            body: new ReadableStream<Uint8Array>({
              start(controller) {
                for (const part of parts) controller.enqueue(new TextEncoder().encode(part))
                controller.close()
              }
            }),
            duplex: "half"
          })
        const small = await chunked(['{"language":', '"fr"}'])
        expect(small.status).toBe(200)
        expect(await small.json()).toMatchObject({ language: "fr" })
        const large = await chunked(['{"language":"', "x".repeat(10_000), "x".repeat(10_000), '"}'])
        expect(large.status).toBe(413)
      })

      it("a body over the limit is 413; no credential is 401", async () => {
        const tooLarge = await fetch(url + preferences, {
          method: "PUT",
          headers: { ...auth, "content-type": "application/json" },
          body: `{"language":"${"x".repeat(20_000)}"}`
        })
        expect(tooLarge.status).toBe(413)
        expect(await tooLarge.json()).toMatchObject({ code: "payload_too_large" })
        const anonymous = await fetch(url + preferences)
        expect(anonymous.status).toBe(401)
      })
    }
  )
}
