import { SIGNAL_REPEAT_WINDOW_MS } from "@accord/node/stop-signals"
import { expect } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { setTimeout as delay } from "node:timers/promises"
import { REPEATED_SIGNAL_MESSAGE } from "../src/logger.js"
import { shellParentWarning } from "../src/shell-parent.js"
import {
  groupIsRunning,
  healthRequest,
  isRunning,
  killGroup,
  npmCommand,
  openConnection,
  repoRoot,
  spawnCli,
  spawnCommand,
  spawnNpmStart,
  USER_TOKEN,
  type Cli,
  type SpawnOptions
} from "./cli-helpers.js"

/**
 * The commands the docs print to run the server, and the check each must pass for every route a stop signal takes:
 * signal-routes.test.ts runs those of a clone, packed-install.test.ts those of a project that installed the packages,
 * and readme-commands.test.ts checks that the docs print no other kind.
 */

/** The Node.js the repository pins (the root devDependency `node`), which README's npx line runs the server on. */
export const pinnedNode = (
  JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { devDependencies: Record<string, string> }
).devDependencies["node"]

export const binJs = "packages/server/bin/accord.js"

export interface ServerCommand {
  /** As the docs print it, the server's options standing as ARGS. */
  readonly printed: string
  /**
   * Whether a process of its own (npm, npx) stands between whoever sends the signal and the server: it must pass the
   * signal on, and wait for the server before it exits.
   */
  readonly wrapper: boolean
  readonly spawn: (args: ReadonlyArray<string>, options: SpawnOptions) => Cli
}

/** npx, with the pinned Node fetched from npx's cache when it is there (the suites warm it once). */
export const spawnNpx = (args: ReadonlyArray<string>, env: Record<string, string>, options: SpawnOptions): Cli => {
  const [npx, ...npxArgs] = npmCommand("npx")
  return spawnCommand(npx, [...npxArgs, ...args], { npm_config_prefer_offline: "true", ...env }, options)
}

/** The commands of a clone (README, packages/server/README.md, docs). */
export const serverCommands: ReadonlyArray<ServerCommand> = [
  {
    printed: "npm start -- ARGS",
    wrapper: true,
    spawn: (args, options) => spawnNpmStart(args, {}, { ...options, silent: false })
  },
  {
    printed: "npm start --silent -- ARGS",
    wrapper: true,
    spawn: (args, options) => spawnNpmStart(args, {}, { ...options, silent: true })
  },
  {
    printed: `npx -y -p node@${pinnedNode} -- exec node ${binJs} ARGS`,
    wrapper: true,
    spawn: (args, options) =>
      spawnNpx(["-y", "-p", `node@${pinnedNode}`, "--", "exec", "node", binJs, ...args], {}, options)
  },
  {
    printed: `node ${binJs} ARGS`,
    wrapper: false,
    spawn: (args, options) => spawnCommand(process.execPath, [join(repoRoot, binJs), ...args], {}, options)
  },
  {
    printed: "node packages/server/dist/main.js ARGS",
    wrapper: false,
    spawn: (args, options) => spawnCli(args, {}, options)
  }
]

/**
 * The commands of a project that installed the packages (README, "Deploying"), run in `appDir()` (known once the
 * project is installed) with `env` (its PATH carrying a Node.js the server accepts), its start script `exec accord`.
 */
export const installedCommands = (appDir: () => string, env: Record<string, string>): ReadonlyArray<ServerCommand> => [
  {
    printed: "npx -c 'exec accord ARGS'",
    wrapper: true,
    spawn: (args, options) =>
      spawnNpx(["-c", `exec accord ${args.map((arg) => `'${arg}'`).join(" ")}`], env, { ...options, cwd: appDir() })
  },
  {
    printed: '"start": "exec accord ARGS", then npm start',
    wrapper: true,
    spawn: (args, options) => {
      const [npm, ...npmArgs] = npmCommand("npm")
      return spawnCommand(npm, [...npmArgs, "start", "--silent", "--", ...args], env, { ...options, cwd: appDir() })
    }
  }
]

export type StopSignal = "SIGTERM" | "SIGINT"
export const STOP_SIGNALS: ReadonlyArray<StopSignal> = ["SIGTERM", "SIGINT"]

/**
 * - the process group: a terminal's Ctrl-C, systemd's KillMode=control-group, `kill -TERM -PGID`; with a wrapper the
 *   server gets the signal twice, from the group and forwarded, and the second must not end the drain;
 * - the wrapper alone: `docker stop` on `CMD ["npm", "start"]`, a supervisor that signals its child; the wrapper must
 *   pass it on, and wait for the server;
 * - the server alone.
 */
export type Route = "the process group" | "the wrapper alone" | "the server alone"

export const routesOf = (command: ServerCommand): ReadonlyArray<Route> =>
  command.wrapper
    ? ["the process group", "the wrapper alone", "the server alone"]
    : ["the process group", "the server alone"]

/** Every command x every route x SIGTERM and SIGINT. */
export const signalMatrix = (commands: ReadonlyArray<ServerCommand>) =>
  commands.flatMap((command) =>
    routesOf(command).flatMap((route) =>
      STOP_SIGNALS.map((signal) => [command.printed, signal, route, { command, route, signal }] as const)
    )
  )

/** What the server logs at start when npm runs it through a shell, which passes no signal on. */
export const shellParentMessage = shellParentWarning({ npm_lifecycle_event: "npx" }, () => "sh")?.message

/** The process groups the checks started: a failed one may leave its group running (`killStartedGroups`). */
const groups = new Set<number>()

export const killStartedGroups = (): void => {
  for (const pgid of groups) killGroup(pgid)
}

const UPLOADS = 3
const body = JSON.stringify({ mfa_enabled: true })

/** An accepted keep-alive connection carrying a PUT whose body has only begun to arrive; `finish` sends the rest. */
export const startUpload = async (url: string) => {
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

/**
 * The command, detached (a session and process group of its own, as a supervisor or a terminal starts a service), on a
 * free port with `seedPath` (holding cli-helpers' `testSeed`), with the server's pid once it listens.
 */
export const startDetached = async (command: ServerCommand, seedPath: string, args: ReadonlyArray<string> = []) => {
  const cli = command.spawn(["--port", "0", "--seed", seedPath, ...args], { detached: true })
  const pgid = cli.child.pid
  if (pgid === undefined) throw new Error(`${command.printed} did not start`)
  groups.add(pgid)
  const url = await cli.listening
  await cli.logged("listening")
  const serverPid = cli.logLines().find((line) => line["msg"] === "listening")?.["pid"]
  expect(typeof serverPid).toBe("number")
  // A wrapper runs the server as its child (exec: no shell between them); without one the command is the server.
  if (command.wrapper) expect(serverPid).not.toBe(pgid)
  else expect(serverPid).toBe(pgid)
  return { cli, url, serverPid: serverPid as number, pgid }
}

export const sendSignal = (
  route: Route,
  signal: StopSignal,
  target: { readonly pgid: number; readonly serverPid: number }
): void => {
  process.kill(
    route === "the process group" ? -target.pgid : route === "the wrapper alone" ? target.pgid : target.serverPid,
    signal
  )
}

/** The messages the server process itself logged (not a wrapper's lines, were there any). */
export const serverMessages = (cli: Cli, serverPid: number): ReadonlyArray<unknown> =>
  cli
    .logLines()
    .filter((line) => line["pid"] === serverPid)
    .map((line) => line["msg"])

/**
 * The check: uploads whose bodies are still arriving when `signal` lands by `route` are answered in full (no reset),
 * the command exits 0 having drained once, after its server, and nothing of its group is left running.
 */
export const drainsOnSignal = async (
  command: ServerCommand,
  route: Route,
  signal: StopSignal,
  seedPath: string,
  args: ReadonlyArray<string> = []
): Promise<void> => {
  const running = await startDetached(command, seedPath, args)
  const { cli, url, serverPid, pgid } = running
  try {
    const uploads = await Promise.all(Array.from({ length: UPLOADS }, () => startUpload(url)))
    sendSignal(route, signal, running)
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
    const logged = serverMessages(cli, serverPid)
    expect(logged).not.toContain(shellParentMessage)
    expect(logged.filter((message) => message === "draining")).toHaveLength(1)
    expect(logged).not.toContain("second signal, exiting without finishing the drain")
    expect(logged.at(-1)).toBe("stopped")
  } finally {
    killGroup(pgid)
  }
}
