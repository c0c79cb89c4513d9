import { execFileSync, spawn, type ChildProcess } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Webhook } from "standardwebhooks"
import { OPERATION_DOCS } from "@accord/contract"
import { parseWebhookSecrets } from "@accord/contract/webhook-secrets"

// The root README's webhook receiver ("Events and webhooks"), run as the README prints it: the secret made by its
// line, the receiver saved as receiver.mts in a project that has @accord/client and started by its command, as its
// own process. What a Standard Webhooks signer (standardwebhooks) or the server signs it takes (204) and prints;
// anything else it refuses (400). Reads the built packages (dist): `npm test` builds first.

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
const source = readFileSync(new URL("./readme-webhook-example.ts", import.meta.url), "utf8")
const example = source.slice(source.indexOf("// README:start\n") + 16, source.indexOf("// README:end"))

/** The README's two commands, word for word (their comments apart). */
const MAKE_SECRET = `export WEBHOOK_SECRET="whsec_$(openssl rand -base64 32)"`
const RUN_RECEIVER = "npx -y -p node@24.21.0 -- exec node receiver.mts"

/** A process's stdout as it comes, and a wait for a line of it. */
interface Running {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly until: (pattern: RegExp) => Promise<RegExpMatchArray>
}

const running: Array<ChildProcess> = []

/** Starts `command` with `args` in a process group of its own (npx's node is in it), collecting stdout. */
const start = (command: string, args: ReadonlyArray<string>, cwd: string, env: Record<string, string>): Running => {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, detached: true, stdio: "pipe" })
  running.push(child)
  let out = ""
  let err = ""
  const waiters = new Set<() => void>()
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8")
    for (const waiter of waiters) waiter()
  })
  child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")))
  const until = (pattern: RegExp) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = out.match(pattern)
        if (match !== null) {
          waiters.delete(check)
          resolve(match)
        }
      }
      waiters.add(check)
      child.once("exit", (code) =>
        reject(new Error(`${command} exited (${code}) before printing ${pattern}:\n${out}\n${err}`))
      )
      check()
    })
  return { child, stdout: () => out, until }
}

/** Ends a process group this file started, and waits for its leader. */
const stop = async (child: ChildProcess): Promise<void> => {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
  const exited = new Promise((resolve) => child.once("exit", resolve))
  process.kill(-child.pid, "SIGTERM")
  await exited
}

/** Whether a socket listens on `port` at 127.0.0.1 and at no other address (Linux's /proc/net tables). */
const listensOnLoopbackOnly = (port: number): boolean | undefined => {
  if (!existsSync("/proc/net/tcp")) return undefined
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0")
  const listening = ["/proc/net/tcp", "/proc/net/tcp6"]
    .filter((table) => existsSync(table))
    .flatMap((table) => readFileSync(table, "utf8").trim().split("\n").slice(1))
    .map((line) => line.trim().split(/\s+/))
    .filter(([, local, , state]) => state === "0A" && local?.endsWith(`:${hexPort}`))
    .map(([, local]) => local?.split(":")[0])
  return listening.length > 0 && listening.every((address) => address === "0100007F")
}

/** The feed's example event, with a previous default: what the receiver prints a line for. */
const [feedExample] = OPERATION_DOCS.listEvents.successExample.data
const body = JSON.stringify({ ...feedExample, data: { payment_method_id: "pm_2", previous_default_id: "pm_1" } })
const signedBy = (secret: string, signedBody: string) => {
  const at = new Date()
  return {
    "webhook-id": "019a4f6e-3c2b-7d40-9a1e-5f6b7c8d9e0f",
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign("019a4f6e-3c2b-7d40-9a1e-5f6b7c8d9e0f", at, signedBody)
  }
}

let project = ""
let madeSecret = ""

beforeAll(async () => {
  // A project of a user's: receiver.mts, and @accord/client in its node_modules (as installed, the built package).
  project = await mkdtemp(join(tmpdir(), "accord-receiver-"))
  await writeFile(join(project, "receiver.mts"), example)
  await mkdir(join(project, "node_modules/@accord"), { recursive: true })
  await symlink(join(repoRoot, "packages/client"), join(project, "node_modules/@accord/client"), "dir")
  madeSecret = execFileSync("sh", ["-c", `${MAKE_SECRET}\nprintf %s "$WEBHOOK_SECRET"`], { encoding: "utf8" })
})

afterAll(async () => {
  await Promise.all(running.map(stop))
  if (project !== "") await rm(project, { recursive: true, force: true })
})

describe("the README's webhook receiver", () => {
  it("is in the README as it is here, with the commands that make its secret and run it", () => {
    expect(readme).toContain(example)
    expect(readme).toContain(`${MAKE_SECRET} `)
    expect(readme).toContain(`${RUN_RECEIVER} `)
    // The same secret's recipe where an operator looks for WEBHOOK_SECRET: the server's options, the operations guide.
    for (const file of ["packages/server/README.md", "docs/operations.md"])
      expect(readFileSync(join(repoRoot, file), "utf8"), file).toContain(`"whsec_$(openssl rand -base64 32)"`)
  })

  it("the README's line makes a secret of 32 bytes, as the server reads one", () => {
    expect(madeSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(parseWebhookSecrets(madeSecret)?.map((key) => key.length)).toEqual([32])
  })

  // The made secret, and a rotation written as an operator may write it: two spaces, a line break after.
  const cases: ReadonlyArray<readonly [string, () => { readonly variable: string; readonly signer: string }]> = [
    ["the secret the README's line made", () => ({ variable: madeSecret, signer: madeSecret })],
    [
      "two secrets separated by two spaces, a line break after, signed by the second",
      () => {
        const second = `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("base64")}`
        return { variable: `${madeSecret}  ${second}\n`, signer: second }
      }
    ]
  ]

  it.each(cases)(
    "run by its command, on 127.0.0.1 only, with %s: takes a signed event and prints it, refuses a changed one",
    async (_, secrets) => {
      const { variable, signer } = secrets()
      const receiver = start("sh", ["-c", RUN_RECEIVER], project, { WEBHOOK_SECRET: variable, RECEIVER_PORT: "0" })
      const [, port = ""] = await receiver.until(/listening on http:\/\/127\.0\.0\.1:(\d+)\n/)
      expect(listensOnLoopbackOnly(Number(port)) ?? true).toBe(true)
      const url = `http://127.0.0.1:${port}/`
      const taken = await fetch(url, { method: "POST", headers: signedBy(signer, body), body })
      expect(taken.status).toBe(204)
      await receiver.until(/users\/u_1: default pm_1 -> pm_2\n/)
      const changed = body.replace("pm_2", "pm_9")
      expect((await fetch(url, { method: "POST", headers: signedBy(signer, body), body: changed })).status).toBe(400)
      const unsigned = await fetch(url, { method: "POST", body })
      expect(unsigned.status).toBe(400)
      expect(receiver.stdout().match(/default/g)).toHaveLength(1)
      await stop(receiver.child)
    },
    120_000
  )

  it("prints the change the server delivers when the README's curl makes pm_2 the default", async () => {
    const receiver = start("sh", ["-c", RUN_RECEIVER], project, { WEBHOOK_SECRET: madeSecret, RECEIVER_PORT: "0" })
    const [, port = ""] = await receiver.until(/listening on http:\/\/127\.0\.0\.1:(\d+)\n/)
    // The server as built (the README's `npm start` builds first), with the README's flags and the same variable.
    const server = start(
      process.execPath,
      [
        "packages/server/bin/accord.js",
        "--port",
        "0",
        "--seed",
        "seed.json",
        "--webhook-url",
        `http://127.0.0.1:${port}/`
      ],
      repoRoot,
      { WEBHOOK_SECRET: madeSecret }
    )
    const [, api = ""] = await server.until(/listening on (http:\/\/127\.0\.0\.1:\d+)\n/)
    const put = await fetch(`${api}/api/payments/v1/payment-methods/pm_2/`, {
      method: "PUT",
      headers: { Authorization: "Bearer u1-demo-token-7f3c9a" }
    })
    expect(put.status).toBe(200)
    await receiver.until(/users\/u_1: default pm_1 -> pm_2\n/)
    await Promise.all([stop(server.child), stop(receiver.child)])
  }, 120_000)
})
