import { SIGNAL_REPEAT_WINDOW_MS } from "@accord/node/stop-signals"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { setTimeout as delay } from "node:timers/promises"
import { REPEATED_SIGNAL_MESSAGE } from "../src/logger.js"
import {
  groupIsRunning,
  healthRequest,
  isRunning,
  killGroup,
  npmCommand,
  openConnection,
  repoRoot,
  USER_TOKEN,
  useBuiltServerAndSeed,
  type Cli
} from "./cli-helpers.js"
import { pinnedNode, serverCommands, type ServerCommand } from "./run-commands.js"

/**
 * Every command the docs print to run the server x every route a stop signal takes x SIGTERM and SIGINT, as users
 * meet them: the command started in a process group of its own (as a supervisor or a terminal starts it), uploads
 * whose bodies are still arriving when the signal lands, then the signal
 * - to the process group (a terminal's Ctrl-C, systemd's KillMode=control-group, `kill -TERM -PGID`): with a wrapper,
 *   the server gets it twice, from the group and forwarded by npm, and the second must not end the drain;
 * - to the wrapper alone (`docker stop` on `CMD ["npm", "start"]`, a supervisor that signals its child): the wrapper
 *   must pass it on, and wait for the server;
 * - to the server alone.
 * Each must answer every upload (no reset), exit 0 having drained, and leave no process of the group running.
 */

const suite = useBuiltServerAndSeed()
const started: Array<Cli> = []

beforeAll(() => {
  // What `npm start` builds (the whole tree, not only the server) is built once here, so that the starts side by
  // side find nothing to write; and the pinned Node is fetched once into npx's cache, for the same reason.
  execFileSync(process.execPath, [`${repoRoot}node_modules/typescript/bin/tsc`, "-b"], { cwd: repoRoot, stdio: "pipe" })
  const [npx, ...npxArgs] = npmCommand("npx")
  execFileSync(npx, [...npxArgs, "-y", "-p", `node@${pinnedNode}`, "--", "node", "--version"], {
    cwd: repoRoot,
    stdio: "pipe"
  })
}, 300_000)

afterAll(() => {
  for (const cli of started) killGroup(cli.child.pid)
})

type Signal = "SIGTERM" | "SIGINT"
type Route = "the process group" | "the wrapper alone" | "the server alone"

const UPLOADS = 3
const body = JSON.stringify({ mfa_enabled: true })

/** An accepted keep-alive connection carrying a PUT whose body has only begun to arrive; `finish` sends the rest. */
const startUpload = async (url: string) => {
  const connection = await openConnection(url)
  // One complete exchange first: from then on the connection is certainly accepted.
  connection.send(healthRequest)
  await connection.received('{"status":"ok"}')
  connection.send(
    "PUT /api/users/v1/preferences/language/ HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
      `Authorization: Bearer ${USER_TOKEN}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 5)}`
  )
  return { ...connection, finish: () => connection.send(body.slice(5)) }
}

/** The command, detached (its own session and process group), on a free port; with the server's pid once it listens. */
const start = async (command: ServerCommand, args: ReadonlyArray<string>) => {
  const cli = command.spawn(["--port", "0", "--seed", suite.seedPath, ...args], { detached: true })
  started.push(cli)
  const url = await cli.listening
  await cli.logged("listening")
  const serverPid = cli.logLines().find((line) => line["msg"] === "listening")?.["pid"]
  expect(typeof serverPid).toBe("number")
  // A wrapper runs the server as its child (exec: no shell between them); without one the command is the server.
  if (command.wrapper) expect(serverPid).not.toBe(cli.child.pid)
  else expect(serverPid).toBe(cli.child.pid)
  return { cli, url, serverPid: serverPid as number, pgid: cli.child.pid as number }
}

const send = (route: Route, signal: Signal, target: { readonly pgid: number; readonly serverPid: number }) =>
  process.kill(
    route === "the process group" ? -target.pgid : route === "the wrapper alone" ? target.pgid : target.serverPid,
    signal
  )

const messages = (cli: Cli, pid: number) =>
  cli
    .logLines()
    .filter((line) => line["pid"] === pid)
    .map((line) => line["msg"])

const drains = async (command: ServerCommand, route: Route, signal: Signal, args: ReadonlyArray<string> = []) => {
  const running = await start(command, args)
  const { cli, url, serverPid, pgid } = running
  try {
    const uploads = await Promise.all(Array.from({ length: UPLOADS }, () => startUpload(url)))
    send(route, signal, running)
    await cli.logged("draining")
    // The group's signal reaches a wrapper too, which forwards it: the bodies go on once the server has had that copy
    // (it logs it), or once the window a copy counts in has passed (the kernel may have merged the two into one).
    if (route === "the process group" && command.wrapper)
      await Promise.race([cli.logged(REPEATED_SIGNAL_MESSAGE).catch(() => undefined), delay(SIGNAL_REPEAT_WINDOW_MS)])
    for (const upload of uploads) upload.finish()
    const wires = await Promise.all(uploads.map((upload) => upload.closed))

    expect(uploads.map((upload) => upload.error())).toEqual(uploads.map(() => undefined))
    for (const wire of wires) {
      // A body ends without a line break, so the next status line may follow it directly.
      expect(wire.match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 200", "HTTP/1.1 200"])
      expect(wire).toContain('"mfa_enabled":true')
    }
    expect(await cli.exited).toEqual({ code: 0, signal: null })
    // A wrapper exits after its server, never before: nothing of the group is left running, the server least of all.
    expect(isRunning(serverPid), "the server outlived the command").toBe(false)
    expect(groupIsRunning(pgid), "a process of the command's group is still running").toBe(false)
    const logged = messages(cli, serverPid)
    expect(logged.filter((message) => message === "draining")).toHaveLength(1)
    expect(logged).not.toContain("second signal, exiting without finishing the drain")
    expect(logged.at(-1)).toBe("stopped")
  } finally {
    killGroup(pgid)
  }
}

const routesOf = (command: ServerCommand): ReadonlyArray<Route> =>
  command.wrapper ? ["the process group", "the wrapper alone", "the server alone"] : ["the process group", "the server alone"]

const SIGNALS: ReadonlyArray<Signal> = ["SIGTERM", "SIGINT"]

const matrix = serverCommands.flatMap((command) =>
  routesOf(command).flatMap((route) => SIGNALS.map((signal) => ({ command, route, signal })))
)

describe.concurrent("every printed run command x every signal route: the uploads in flight are answered, exit 0", () => {
  it.for(matrix.map((row) => [row.command.printed, row.signal, row.route, row] as const))(
    "`%s`: %s to %s",
    async ([, , , { command, route, signal }]) => drains(command, route, signal),
    120_000
  )
})

const npmStartSilent = serverCommands.find((command) => command.printed === "npm start --silent -- ARGS")

describe.concurrent("every adapter drains a signal to the process group under `npm start --silent`", () => {
  it.for(
    ["koa", "express", "fetch"].flatMap((adapter) => SIGNALS.map((signal) => [adapter, signal] as const))
  )("--adapter %s, %s", async ([adapter, signal]) => {
    if (npmStartSilent === undefined) throw new Error("no `npm start --silent` among the printed commands")
    await drains(npmStartSilent, "the process group", signal, ["--adapter", adapter])
  }, 120_000)
})

describe("a deliberate second signal", () => {
  it(`Ctrl-C again ${SIGNAL_REPEAT_WINDOW_MS / 1000} s or more after the first ends the drain at once: 130, nothing left running`, async () => {
    if (npmStartSilent === undefined) throw new Error("no `npm start --silent` among the printed commands")
    const running = await start(npmStartSilent, [])
    const { cli, url, serverPid, pgid } = running
    try {
      // An upload that never completes holds the drain open (up to the 10 s default).
      const held = await startUpload(url)
      send("the process group", "SIGINT", running)
      await cli.logged("draining")
      // The server took the first signal before it logged "draining": from here on the window is certainly past.
      await delay(SIGNAL_REPEAT_WINDOW_MS * 1.5)
      send("the process group", "SIGINT", running)
      const exited = await cli.exited
      expect(messages(cli, serverPid)).toContain("second signal, exiting without finishing the drain")
      // npm reports its script's status: the server's 130 (128 + SIGINT).
      expect(exited).toEqual({ code: 130, signal: null })
      expect(isRunning(serverPid)).toBe(false)
      expect(groupIsRunning(pgid)).toBe(false)
      // The held upload was never answered: the drain did not finish.
      expect(await held.closed).not.toMatch(/HTTP\/1\.1 \d{3}[\s\S]*HTTP\/1\.1 \d{3}/)
    } finally {
      killGroup(pgid)
    }
  }, 120_000)
})
