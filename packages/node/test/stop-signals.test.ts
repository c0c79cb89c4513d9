import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { setTimeout as delay } from "node:timers/promises"
import { makeStopSignalRule, SIGNAL_REPEAT_WINDOW_MS } from "@accord/node/stop-signals"

describe("the stop signal rule", () => {
  it("the first signal drains; others within the window of the first are repeats; any later one forces", () => {
    let now = 5_000
    const rule = makeStopSignalRule(1_000, () => now)
    const verdicts = [0, 2, 998, 999, 1_000, 1_500, 3_000].map((offset) => {
      now = 5_000 + offset
      return rule()
    })
    expect(verdicts).toEqual([
      { verdict: "drain", sinceFirstMs: 0 },
      { verdict: "repeat", sinceFirstMs: 2 },
      { verdict: "repeat", sinceFirstMs: 998 },
      { verdict: "repeat", sinceFirstMs: 999 },
      { verdict: "force", sinceFirstMs: 1_000 },
      { verdict: "force", sinceFirstMs: 1_500 },
      { verdict: "force", sinceFirstMs: 3_000 }
    ])
  })

  it("the window counts from the first signal, not the latest: repeats do not stretch it", () => {
    let now = 0
    const rule = makeStopSignalRule(1_000, () => now)
    const verdicts = [0, 600, 1_200].map((at) => {
      now = at
      return rule().verdict
    })
    expect(verdicts).toEqual(["drain", "repeat", "force"])
  })

  it("is a second by default", () => {
    expect(SIGNAL_REPEAT_WINDOW_MS).toBe(1_000)
  })
})

const source = fileURLToPath(new URL("../src/stop-signals.ts", import.meta.url))

/**
 * A process that handles its stop signals with `onStopSignals` (window `windowMs`) and prints each verdict as a line;
 * it exits 0 only when its force handler runs.
 */
const spawnHandling = (windowMs: number) => {
  const script = `
    import { onStopSignals } from ${JSON.stringify(source)}
    const say = (line) => process.stdout.write(line + "\\n")
    onStopSignals({
      windowMs: ${windowMs},
      drain: (signal) => say("drain " + signal),
      repeat: (signal) => say("repeat " + signal),
      force: (signal) => { say("force " + signal); process.exit(0) }
    })
    setInterval(() => {}, 1000)
    say("ready")
  `
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] })
  let out = ""
  const waiters = new Set<() => void>()
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk
    for (const waiter of waiters) waiter()
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal }))
  )
  const printed = (line: string) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (out.split("\n").includes(line)) {
          waiters.delete(check)
          resolve()
        }
      }
      waiters.add(check)
      check()
    })
  return { child, printed, exited, lines: () => out.split("\n").filter((line) => line !== "") }
}

describe("onStopSignals, with real signals", () => {
  it("keeps its handlers: repeats within the window never meet Node's default (which would kill the process)", async () => {
    // A window no test run outlasts: every later signal is a repeat.
    const host = spawnHandling(600_000)
    try {
      await host.printed("ready")
      host.child.kill("SIGTERM")
      await host.printed("drain SIGTERM")
      host.child.kill("SIGINT")
      await host.printed("repeat SIGINT")
      host.child.kill("SIGTERM")
      await host.printed("repeat SIGTERM")
      expect(host.child.exitCode).toBe(null)
      expect(host.lines()).toEqual(["ready", "drain SIGTERM", "repeat SIGINT", "repeat SIGTERM"])
    } finally {
      host.child.kill("SIGKILL")
    }
  })

  it("a signal after the window forces", async () => {
    const windowMs = 200
    const host = spawnHandling(windowMs)
    try {
      await host.printed("ready")
      host.child.kill("SIGINT")
      await host.printed("drain SIGINT")
      // The process took the first signal before printing it: from here on the window is certainly past.
      await delay(windowMs * 1.5)
      host.child.kill("SIGINT")
      expect(await host.exited).toEqual({ code: 0, signal: null })
      expect(host.lines()).toEqual(["ready", "drain SIGINT", "force SIGINT"])
    } finally {
      host.child.kill("SIGKILL")
    }
  })
})
