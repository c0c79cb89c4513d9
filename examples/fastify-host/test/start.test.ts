import { afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { execFileSync, spawn, type ChildProcess } from "node:child_process"
import { once } from "node:events"
import { fileURLToPath } from "node:url"

const exampleDir = fileURLToPath(new URL("..", import.meta.url))
const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
// PGlite in memory: the start script must run without any database around.
const env = { ...process.env, PORT: "0", HOST: "127.0.0.1", DATABASE_URL: "" }

// `npm start` is `tsc -b && exec node dist/main.js`: build once, then run what it runs.
beforeAll(() => {
  execFileSync(process.execPath, [`${repoRoot}node_modules/typescript/bin/tsc`, "-b", exampleDir], { stdio: "pipe" })
}, 120_000)

const children: Array<ChildProcess> = []
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL")
})

describe("fastify-host start script", () => {
  it("serves the host and Accord on PGlite, signs users in, and stops on SIGTERM", async () => {
    const child = spawn(process.execPath, ["dist/main.js"], { cwd: exampleDir, env, stdio: ["ignore", "pipe", "pipe"] })
    children.push(child)
    let stdout = ""
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk
        const found = /fastify-host listening on (http:\/\/\S+) \(store: PGlite in memory\)/.exec(stdout)?.[1]
        if (found !== undefined) resolve(found)
      })
      child.once("exit", (code) => reject(new Error(`exited with ${code} before listening`)))
    })

    const login = await fetch(`${url}/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"user":"u_1"}'
    })
    const { token } = (await login.json()) as { token: string }
    const list = await fetch(`${url}/api/payments/v1/payment-methods/`, {
      headers: { authorization: `Bearer ${token}` }
    })
    expect(list.status).toBe(200)
    expect(((await list.json()) as { data: Array<{ id: string }> }).data.map((method) => method.id)).toEqual([
      "pm_bank",
      "pm_card"
    ])

    child.kill("SIGTERM")
    const [code] = (await once(child, "exit")) as [number | null]
    expect(code).toBe(0)
    expect(stdout).not.toContain(token)
  })
})
