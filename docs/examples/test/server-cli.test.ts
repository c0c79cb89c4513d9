import { afterEach, describe, expect, it } from "@effect/vitest"
import { spawn, type ChildProcess } from "node:child_process"
import { once } from "node:events"
import { fileURLToPath } from "node:url"
import { demoPath, demoToken } from "./demo-call.js"

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
/** The environment without any of the server's own variables, so only the script sets them. */
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([name]) => !/^(AUTH|JWT_|JWKS_|ADAPTER|STORE|SEED_FILE|HOST|PORT|DATABASE_)/.test(name)
  )
)

const children: Array<ChildProcess> = []
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL")
})

describe("docs/examples/server-cli.sh", () => {
  it("builds and runs the built server with seed.json: its demo token is 200, an unknown one 401", async () => {
    const child = spawn("sh", ["docs/examples/server-cli.sh"], {
      cwd: repoRoot,
      env: { ...cleanEnv, PORT: "0" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    let stderr = ""
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => void (stderr += chunk))
    const url = await new Promise<string>((resolve, reject) => {
      let out = ""
      child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
        out += chunk
        const found = /listening on (http:\/\/\S+)/.exec(out)?.[1]
        if (found !== undefined) resolve(found)
      })
      child.once("exit", (code) => reject(new Error(`exited with ${code} before listening:\n${stderr}`)))
    })

    // The guide's curl line for the mount snippets: seed.json holds the same user, token and payment methods.
    const list = await fetch(`${url}${demoPath}`, { headers: { authorization: `Bearer ${demoToken}` } })
    expect(list.status).toBe(200)
    expect(((await list.json()) as { data: Array<{ id: string }> }).data.map((method) => method.id)).toEqual([
      "pm_1",
      "pm_2"
    ])
    const unknown = await fetch(`${url}${demoPath}`, { headers: { authorization: "Bearer not-a-known-token" } })
    expect(unknown.status).toBe(401)

    // `exec` made the server the script's process, so the signal reaches it and it drains and exits 0.
    child.kill("SIGTERM")
    const [code] = (await once(child, "exit")) as [number | null]
    expect(code).toBe(0)
    expect(stderr).not.toContain(demoToken)
  }, 120_000)
})
