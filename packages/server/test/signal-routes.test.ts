import { SIGNAL_REPEAT_WINDOW_MS } from "@accord/node/stop-signals"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { setTimeout as delay } from "node:timers/promises"
import { groupIsRunning, isRunning, killGroup, npmCommand, repoRoot, useBuiltServerAndSeed } from "./cli-helpers.js"
import {
  binJs,
  drainsOnSignal,
  killStartedGroups,
  pinnedNode,
  sendSignal,
  serverCommands,
  serverMessages,
  shellParentMessage,
  signalMatrix,
  spawnNpx,
  startDetached,
  startUpload,
  STOP_SIGNALS,
  type ServerCommand
} from "./run-commands.js"

/**
 * Every command the docs print to run the server from a clone x every route a stop signal takes x SIGTERM and SIGINT,
 * as users meet them (run-commands.ts: the commands, the routes and the check). The commands of a project that
 * installed the packages: packed-install.test.ts.
 */

const suite = useBuiltServerAndSeed()

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

afterAll(killStartedGroups)

describe.concurrent(
  "every printed run command x every signal route: the uploads in flight are answered, exit 0",
  () => {
    it.for(signalMatrix(serverCommands))("`%s`: %s to %s", { timeout: 120_000 }, ([, , , { command, route, signal }]) =>
      drainsOnSignal(command, route, signal, suite.seedPath)
    )
  }
)

const npmStartSilent = (): ServerCommand => {
  const command = serverCommands.find((candidate) => candidate.printed === "npm start --silent -- ARGS")
  if (command === undefined) throw new Error("no `npm start --silent` among the printed commands")
  return command
}

describe.concurrent("every adapter drains a signal to the process group under `npm start --silent`", () => {
  it.for(["koa", "express", "fetch"].flatMap((adapter) => STOP_SIGNALS.map((signal) => [adapter, signal] as const)))(
    "--adapter %s, %s",
    { timeout: 120_000 },
    ([adapter, signal]) =>
      drainsOnSignal(npmStartSilent(), "the process group", signal, suite.seedPath, ["--adapter", adapter])
  )
})

describe("a deliberate second signal", () => {
  it(`Ctrl-C again ${SIGNAL_REPEAT_WINDOW_MS / 1000} s or more after the first ends the drain at once: 130, nothing left running`, async () => {
    const running = await startDetached(npmStartSilent(), suite.seedPath)
    const { cli, url, serverPid, pgid } = running
    try {
      // An upload that never completes holds the drain open (up to the 10 s default).
      const held = await startUpload(url)
      sendSignal("the process group", "SIGINT", running)
      await cli.logged("draining")
      // The server took the first signal before it logged "draining": from here on the window is certainly past.
      await delay(SIGNAL_REPEAT_WINDOW_MS * 1.5)
      sendSignal("the process group", "SIGINT", running)
      const exited = await cli.exited
      expect(serverMessages(cli, serverPid)).toContain("second signal, exiting without finishing the drain")
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

describe("npx without exec", () => {
  it("runs the server under a shell that passes no signal on, and the server says so at start", async () => {
    const cli = spawnNpx(
      ["-y", "-p", `node@${pinnedNode}`, "--", "node", binJs, "--port", "0", "--seed", suite.seedPath],
      {},
      { detached: true }
    )
    try {
      // Logged before "listening": in stderr once that is.
      await cli.logged("listening")
      const warning = cli.logLines().find((line) => line["msg"] === shellParentMessage)
      expect(warning).toMatchObject({ level: 40, parent: "sh", npmEvent: "npx" })
    } finally {
      killGroup(cli.child.pid)
    }
  }, 120_000)
})
