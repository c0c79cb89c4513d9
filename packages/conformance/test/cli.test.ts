import { startWith } from "@accord/test-support"
import type { SeedInput } from "@accord/domain"
import { operations } from "@accord/contract"
import { httpAudits, operationAudits, type AuditResult } from "@accord/conformance/audits"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { join } from "node:path"
import { accordConformance, buildCompiled, reportOf, repoRoot, run, tokens } from "./accord-conformance.js"
import { koaHost } from "./koa-host.js"

// `accord-conformance` as users run it: against `npm start -- --seed seed.json` on each adapter (every MUST passes),
// and against hosts with a rule broken (it fails, naming the audits).

const mainJs = join(repoRoot, "packages/server/dist/main.js")
const seedJson: SeedInput = JSON.parse(readFileSync(join(repoRoot, "seed.json"), "utf8"))
/** What only a runner that seeded its own store can check: the CLI skips these. */
const SEEDED = httpAudits.filter((audit) => audit.needs.includes("seeded")).map((audit) => audit.id)

const idsWith = (results: ReadonlyArray<AuditResult>, status: AuditResult["status"]) =>
  results.filter((result) => result.status === status).map((result) => result.id)

/** `npm start -- [--adapter ADAPTER] --port 0 --seed seed.json [more]`, the compiled server; resolves with its URL. */
const startServer = async (adapter?: string, more: ReadonlyArray<string> = []) => {
  const adapterOption = adapter === undefined ? [] : ["--adapter", adapter]
  const options = [...adapterOption, "--port", "0", "--seed", "seed.json", ...more]
  const child = spawn(process.execPath, [mainJs, ...options], {
    cwd: repoRoot,
    // Cheap scrypt (the audits create plan entries), warnings only; nothing else of the caller's environment.
    env: { PATH: process.env["PATH"] ?? "", SCRYPT_N: "1024", SCRYPT_P: "1", LOG_LEVEL: "warn" },
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
    child.on("exit", (code) => reject(new Error(`the server exited (${code}) before listening:\n${stderr}`)))
  })
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve()
      child.on("exit", () => resolve())
      child.kill("SIGTERM")
    })
  return { url, stop }
}

beforeAll(() => {
  // The command and the server run compiled.
  buildCompiled("packages/server", "packages/conformance")
}, 120_000)

describe("accord-conformance against `npm start -- --seed seed.json`", () => {
  it("the README's command, as written, passes every MUST on the default adapter (fastify)", async () => {
    const readme = readFileSync(join(repoRoot, "packages/conformance/README.md"), "utf8")
    const command = /^npx accord-conformance .*$/m.exec(readme)?.[0]
    expect(command, "the README's command").toBeDefined()
    // `npm start -- --seed seed.json` but on a free port: the default adapter (fastify).
    const server = await startServer()
    try {
      const [npx = "", ...args] = (command ?? "").replace("http://127.0.0.1:3000", server.url).split(" ")
      const ran = await run(npx, args)
      expect(ran.code, ran.stdout).toBe(0)
      const lines = ran.stdout.split("\n")
      expect(lines.filter((line) => /^(PASS|FAIL|SKIP) /.test(line)).length).toBeGreaterThan(50)
      expect(
        lines.filter((line) => line.startsWith("FAIL")),
        ran.stdout
      ).toEqual([])
      // The seeded ones, and the CORS ones: the README's server does no CORS.
      const skipped = httpAudits.filter((audit) => audit.needs.includes("seeded") || audit.needs.includes("cors"))
      expect(ran.stdout).toMatch(
        new RegExp(`^\\d+ passed, 0 failed \\(0 MUST, 0 SHOULD\\), ${skipped.length} skipped$`, "m")
      )
    } finally {
      await server.stop()
    }
  }, 60_000)

  // With CORS on for one origin, which --cors-origin names: the CORS audits run too.
  it.each(["koa", "express", "fetch"])(
    "--adapter %s --cors-origin ORIGIN passes every MUST (--json)",
    async (adapter) => {
      const origin = ["--cors-origin", "https://app.example"]
      const server = await startServer(adapter, origin)
      try {
        const ran = await accordConformance(["--url", `${server.url}/api`, ...tokens, ...origin, "--json"])
        const { results } = reportOf(ran)
        expect(idsWith(results, "fail"), ran.stdout).toEqual([])
        expect(idsWith(results, "skip")).toEqual(SEEDED)
        expect(ran.code).toBe(0)
      } finally {
        await server.stop()
      }
    },
    60_000
  )
})

describe("accord-conformance against a host with a rule broken", () => {
  const servers: Array<{ close: () => Promise<void> }> = []
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()))
  })

  it("a host whose 405 answers lose Allow fails the audits of that rule, names them, and exits 1", async () => {
    const server = await startWith(koaHost({ docs: true, dropAllowOn405: true }))(seedJson)
    servers.push(server)
    const ran = await accordConformance(["--url", `${server.url}/api`, ...tokens])
    expect(ran.code, ran.stdout).toBe(1)
    const failed = [...ran.stdout.matchAll(/^FAIL +(MUST|SHOULD) +(\S+)$/gm)].map(([, level, id]) => `${level} ${id}`)
    // Each operation's 405 with Allow, and its order of checks where a wrong method is one of its refusals.
    const perOperation = operationAudits.filter((audit) => /-(405-allow|order)$/.test(audit.id))
    expect(new Set(perOperation.flatMap((audit) => audit.operations))).toEqual(new Set(Object.keys(operations)))
    expect(failed).toEqual([
      // The MUSTs that look at Allow on a 405: the order of checks, and HEAD's headers against GET's (the host drops
      // Allow from one of the two).
      "MUST ACC-order-route-before-credentials",
      // A host owns the paths outside its prefix (Koa's own 404 there): a SHOULD, so it alone would not fail the run.
      "SHOULD ACC-routes-outside-prefix-404",
      "MUST ACC-routes-405-allow",
      "MUST ACC-head-headers-like-get",
      ...perOperation.map((audit) => `MUST ${audit.id}`)
    ])
    // Each failure says which request and what was expected.
    expect(ran.stdout).toContain(
      'ACC-routes-405-allow\n      GET /api/plans/v1/subscription-plans/public/: Allow: expected "OPTIONS, POST", got undefined'
    )
    expect(ran.stdout).toMatch(/ACC-head-headers-like-get\n {6}HEAD plan entries: GET's headers: expected .*"allow"/)
    expect(ran.stdout).toContain(`failed (${3 + perOperation.length} MUST, 1 SHOULD)`)
  }, 60_000)

  it("only SHOULD failures (no API reference page) exit 0", async () => {
    const server = await startWith(koaHost({ docs: false, dropAllowOn405: false }))(seedJson)
    servers.push(server)
    const ran = await accordConformance([
      "--url",
      `${server.url}/api`,
      ...tokens,
      "--only",
      "ACC-health-ok,ACC-docs-page-local-assets"
    ])
    expect(ran.stdout).toMatch(/^PASS +MUST +ACC-health-ok$/m)
    expect(ran.stdout).toMatch(/^FAIL +SHOULD +ACC-docs-page-local-assets$/m)
    expect(ran.code, ran.stdout).toBe(0)
  }, 60_000)

  it("a usage error exits 2 and says what is missing", async () => {
    const missing = await accordConformance(["--url", "http://127.0.0.1:1/api"])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/missing --user-token, --other-user-token, --client-token/)
    const unknown = await accordConformance(["--only", "ACC-nope", "--list"])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/no audit has the id ACC-nope/)
    const noTime = await accordConformance(["--url", "http://127.0.0.1:1/api", ...tokens, "--timeout-ms", "0"])
    expect(noTime.code).toBe(2)
    expect(noTime.stderr).toMatch(/--timeout-ms must be a whole number of milliseconds above 0, got 0/)
  })

  it("no server is a MUST failure; a reason that quotes a token shows its name instead", async () => {
    const refused = await accordConformance(["--url", "http://127.0.0.1:1/api", ...tokens, "--only", "ACC-health-ok"])
    expect(refused.code).toBe(1)
    expect(refused.stdout).toMatch(/^FAIL +MUST +ACC-health-ok\n +GET \/api\/health: .*ECONNREFUSED/m)
    // A server that answers every request with its Authorization header: the failure quotes the body.
    const echo: Server = createServer((request, response) => {
      response.writeHead(418).end(request.headers.authorization ?? "")
    })
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve))
    servers.push({ close: () => new Promise<void>((resolve) => echo.close(() => resolve())) })
    const address = echo.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    const echoed = await accordConformance([
      "--url",
      `http://127.0.0.1:${port}/api`,
      ...tokens,
      "--only",
      "ACC-auth-client-403"
    ])
    expect(echoed.code).toBe(1)
    expect(echoed.stdout).toContain("-> 418 Bearer <client token>")
    expect(echoed.stdout).not.toContain("web-demo-client-5d8e61")
  })
})
