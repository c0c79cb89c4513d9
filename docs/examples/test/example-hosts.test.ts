import { SIGNAL_REPEAT_WINDOW_MS } from "@accord/node/stop-signals"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { execFileSync, spawn, type ChildProcess } from "node:child_process"
import { connect } from "node:net"
import { setTimeout as delay } from "node:timers/promises"
import { fileURLToPath } from "node:url"

// The guide's run commands for the example hosts, `npm start -w @accord/example-koa-host` and `-fastify-host`, as a
// supervisor or a terminal runs them: in a process group of their own, an upload to Accord in flight, then SIGINT to
// the whole group (a terminal's Ctrl-C: the host gets it from the group and again from npm) or SIGTERM to npm alone
// (which must pass it on). Each answers the upload, exits 0, and leaves nothing running.

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
const tsc = `${repoRoot}node_modules/typescript/bin/tsc`
const jwtSecret = "example-hosts-signals-secret-of-32-bytes-7d1c"
const env = { ...process.env, PORT: "0", HOST: "127.0.0.1", JWT_SECRET: jwtSecret, DATABASE_URL: "" }

beforeAll(() => {
  // What `npm start` builds first, built once: the runs side by side then find nothing to write.
  execFileSync(process.execPath, [tsc, "-b", "examples/koa-host", "examples/fastify-host"], {
    cwd: repoRoot,
    stdio: "pipe"
  })
}, 180_000)

const groups: Array<number> = []
const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
afterAll(() => {
  for (const pgid of groups) if (isRunning(-pgid)) process.kill(-pgid, "SIGKILL")
})

/** `npm start -w WORKSPACE` from the repository root, detached: its own session and process group. */
const npmStart = (workspace: string): ChildProcess => {
  const npmCli = process.env["npm_execpath"]
  const [command, ...args] = npmCli?.endsWith("npm-cli.js") ? [process.execPath, npmCli] : ["npm"]
  const child = spawn(command, [...args, "start", "-w", workspace], {
    cwd: repoRoot,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"]
  })
  if (child.pid !== undefined) groups.push(child.pid)
  return child
}

const listening = (child: ChildProcess): Promise<string> =>
  new Promise((resolve, reject) => {
    let out = ""
    let err = ""
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => void (err += chunk))
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
      const url = /listening on (http:\/\/[^\s)]+)/.exec(out)?.[1]
      if (url !== undefined) resolve(url)
    })
    child.once("exit", (code) => reject(new Error(`exited with ${code} before listening:\n${err}`)))
  })

/**
 * A raw connection that sent a PUT to Accord whose body has only begun, taken by the host (its `100 Continue` says so:
 * a request still unread when the signal lands is the host's to refuse); `finish` sends the rest.
 */
const startUpload = async (url: string, token: string) => {
  const { hostname, port } = new URL(url)
  const socket = connect({ host: hostname, port: Number(port) })
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject))
  let received = ""
  let error: string | undefined
  socket.setEncoding("utf8").on("data", (chunk: string) => void (received += chunk))
  socket.on("error", (cause: Error & { code?: string }) => void (error ??= cause.code ?? cause.message))
  const closed = new Promise<string>((resolve) => socket.once("close", () => resolve(received)))
  const body = JSON.stringify({ timezone: 60 })
  socket.write(
    `PUT /api/users/v1/preferences/language/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`
  )
  while (!received.startsWith("HTTP/1.1 100 Continue\r\n\r\n")) {
    if (socket.destroyed) throw new Error(`the connection closed before 100 Continue: ${received}`)
    await delay(10)
  }
  socket.write(body.slice(0, 4))
  return { finish: () => socket.write(body.slice(4)), closed, error: () => error }
}

/** Resolves once a new connection is refused: the host has taken the signal and closed its listener. */
const refusing = async (url: string): Promise<void> => {
  const { hostname, port } = new URL(url)
  for (;;) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: hostname, port: Number(port) })
      socket.once("connect", () => {
        socket.destroy()
        resolve(false)
      })
      socket.once("error", () => resolve(true))
    })
    if (refused) return
    await delay(20)
  }
}

const hosts = {
  "@accord/example-koa-host": async () =>
    execFileSync(process.execPath, ["examples/koa-host/dist/issue-token.js", "u_1"], {
      cwd: repoRoot,
      env,
      encoding: "utf8"
    }).trim(),
  "@accord/example-fastify-host": async (url: string) => {
    const login = await fetch(`${url}/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"user":"u_1"}'
    })
    return ((await login.json()) as { token: string }).token
  }
} satisfies Record<string, (url: string) => Promise<string>>

const cases = (Object.keys(hosts) as Array<keyof typeof hosts>).flatMap((workspace) => [
  [workspace, "SIGINT", "the process group"] as const,
  [workspace, "SIGTERM", "npm alone"] as const
])

describe.concurrent("the guide's `npm start -w` for the example hosts", () => {
  it.for(cases)(
    "`npm start -w %s`: %s to %s drains the upload in flight, exit 0",
    { timeout: 120_000 },
    async ([workspace, signal, route]) => {
      const npm = npmStart(workspace)
      const pgid = npm.pid as number
      try {
        const exited = new Promise<number | null>((resolve) => npm.once("exit", (code) => resolve(code)))
        const url = await listening(npm)
        const upload = await startUpload(url, await hosts[workspace](url))
        process.kill(route === "the process group" ? -pgid : pgid, signal)
        await refusing(url)
        // npm's copy of the group's signal comes within milliseconds: past the window, whatever was coming has come.
        await delay(SIGNAL_REPEAT_WINDOW_MS)
        upload.finish()
        const wire = await upload.closed
        expect(upload.error()).toBeUndefined()
        expect(wire).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n[\s\S]*"timezone":60/)
        expect(await exited).toBe(0)
        expect(isRunning(-pgid), "a process of npm's group is still running").toBe(false)
      } finally {
        if (isRunning(-pgid)) process.kill(-pgid, "SIGKILL")
      }
    }
  )
})
