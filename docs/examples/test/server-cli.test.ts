import { afterEach, describe, expect, it } from "@effect/vitest"
import { SignJWT } from "jose"
import { spawn, type ChildProcess } from "node:child_process"
import { once } from "node:events"
import { fileURLToPath } from "node:url"

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
const secret = "docs-server-cli-secret-of-at-least-32-bytes"
/** The environment without any of the server's own variables, so only the script sets them. */
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([name]) => !/^(AUTH|JWT_|JWKS_|ADAPTER|STORE|SEED_FILE|HOST|PORT|DATABASE_URL)/.test(name)
  )
)

const children: Array<ChildProcess> = []
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL")
})

describe("docs/examples/server-cli.sh", () => {
  it("runs the server CLI with --auth jwt: JWTs authenticate, the seed's payment methods load, its tokens do not", async () => {
    const child = spawn("sh", ["docs/examples/server-cli.sh"], {
      cwd: repoRoot,
      env: { ...cleanEnv, JWT_SECRET: secret, PORT: "0" },
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

    const token = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("u_1")
      .setIssuer("https://login.example.com/")
      .setAudience("accord-api")
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode(secret))
    const list = await fetch(`${url}/api/payments/v1/payment-methods/`, {
      headers: { authorization: `Bearer ${token}` }
    })
    expect(list.status).toBe(200)
    expect(((await list.json()) as { data: Array<{ id: string }> }).data.map((method) => method.id)).toEqual([
      "pm_1",
      "pm_2"
    ])
    // seed.json's token for u_1: inert under --auth jwt.
    const seeded = await fetch(`${url}/api/payments/v1/payment-methods/`, {
      headers: { authorization: "Bearer u1-demo-token-7f3c9a" }
    })
    expect(seeded.status).toBe(401)

    // `exec` made the server the script's process, so the signal reaches it and it drains and exits 0.
    child.kill("SIGTERM")
    const [code] = (await once(child, "exit")) as [number | null]
    expect(code).toBe(0)
    expect(stderr).not.toContain(secret)
  }, 120_000)

  it("stops at once without JWT_SECRET", async () => {
    const child = spawn("sh", ["docs/examples/server-cli.sh"], {
      cwd: repoRoot,
      env: { ...cleanEnv, PORT: "0" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    let stderr = ""
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => void (stderr += chunk))
    const [code] = (await once(child, "exit")) as [number | null]
    expect(code).not.toBe(0)
    expect(stderr).toContain("JWT_SECRET: set JWT_SECRET")
  })
})
