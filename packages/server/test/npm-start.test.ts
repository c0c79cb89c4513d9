import { describe, expect, it } from "@effect/vitest"
import { buildServer, spawnNpmStart } from "./cli-helpers.js"

/** Whether a process with this pid still exists (signal 0 checks without sending anything). */
const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

// Supervisors, `CMD ["npm", "start"]` containers and process managers signal the process they started: npm. The
// server must get that signal and drain (README, "Try it"; docs/operations.md, "Shutdown").
describe("npm start", () => {
  it("SIGTERM to the npm process reaches the server: it drains, exits 0, and npm exits after it", async () => {
    buildServer()
    const npm = spawnNpmStart(["--port", "0"])
    try {
      await npm.listening
      await npm.logged("listening")
      const serverPid = npm.logLines().find((line) => line["msg"] === "listening")?.["pid"]
      expect(typeof serverPid).toBe("number")
      expect(serverPid).not.toBe(npm.child.pid)
      npm.child.kill("SIGTERM")
      const exited = await npm.exited
      // npm waits for its script's process; with the signal forwarded, the server has stopped by the time npm exits.
      expect(isRunning(serverPid as number), "the server outlived npm").toBe(false)
      expect(exited.code).toBe(0)
      expect(npm.logLines().map((line) => line["msg"])).toContain("stopped")
    } finally {
      if (npm.child.exitCode === null) npm.child.kill("SIGKILL")
      const serverPid = npm.logLines().find((line) => line["msg"] === "listening")?.["pid"]
      if (typeof serverPid === "number" && isRunning(serverPid)) process.kill(serverPid, "SIGKILL")
    }
  }, 120_000)
})
