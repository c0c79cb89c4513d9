import { afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { execFileSync, spawn, type ChildProcess } from "node:child_process"
import { once } from "node:events"
import { fileURLToPath } from "node:url"

const exampleDir = fileURLToPath(new URL("..", import.meta.url))
const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
const secret = "start-test-secret-of-at-least-32-bytes-a71e"
const env = { ...process.env, PORT: "0", HOST: "127.0.0.1", JWT_SECRET: secret }

// `npm start` is `tsc -b && exec node dist/main.js`: build once, then run what it runs.
beforeAll(() => {
  execFileSync(process.execPath, [`${repoRoot}node_modules/typescript/bin/tsc`, "-b", exampleDir], { stdio: "pipe" })
}, 120_000)

const children: Array<ChildProcess> = []
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL")
})

const listeningUrl = (child: ChildProcess) =>
  new Promise<string>((resolve, reject) => {
    let out = ""
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1]
      if (url !== undefined) resolve(url)
    })
    child.once("exit", (code) => reject(new Error(`exited with ${code} before listening`)))
  })

describe("koa-host start script and token helper", () => {
  it("serves the host and Accord with tokens from `npm run token`, and stops on SIGTERM", async () => {
    const child = spawn(process.execPath, ["dist/main.js"], { cwd: exampleDir, env, stdio: ["ignore", "pipe", "pipe"] })
    children.push(child)
    let stderr = ""
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => void (stderr += chunk))
    const url = await listeningUrl(child)

    const token = execFileSync(process.execPath, ["dist/issue-token.js", "u_1"], {
      cwd: exampleDir,
      env,
      encoding: "utf8"
    }).trim()
    const list = await fetch(`${url}/api/payments/v1/payment-methods/`, {
      headers: { authorization: `Bearer ${token}` }
    })
    expect(list.status).toBe(200)
    expect(((await list.json()) as { data: Array<{ id: string }> }).data.map((method) => method.id)).toEqual([
      "pm_bank",
      "pm_card"
    ])
    expect((await fetch(`${url}/hello`)).status).toBe(200)

    // A token signed with the development default is refused: the server took JWT_SECRET from its environment.
    const devToken = execFileSync(process.execPath, ["dist/issue-token.js", "u_1"], {
      cwd: exampleDir,
      env: { ...env, JWT_SECRET: "" },
      encoding: "utf8"
    }).trim()
    expect(
      (await fetch(`${url}/api/payments/v1/payment-methods/`, { headers: { authorization: `Bearer ${devToken}` } }))
        .status
    ).toBe(401)

    child.kill("SIGTERM")
    const [code] = (await once(child, "exit")) as [number | null]
    expect(code).toBe(0)
    expect(stderr).not.toContain(secret)
    expect(stderr).not.toContain(token)
  })
})
