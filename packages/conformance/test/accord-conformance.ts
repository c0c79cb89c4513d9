import type { AuditResult } from "@accord/conformance/audits"
import { execFileSync, spawn, type ChildProcess } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

// `accord-conformance` as users run it, compiled, in a process of its own: for the tests that run the command.

export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
const binJs = join(repoRoot, "packages/conformance/bin/accord-conformance.js")

/** seed.json's two users and client. */
export const tokens = [
  "--user-token",
  "u1-demo-token-7f3c9a",
  "--other-user-token",
  "u2-demo-token-b41e02",
  "--client-token",
  "web-demo-client-5d8e61"
]

export interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const running = new Set<ChildProcess>()

/**
 * Kills every command still running (for an `afterEach`): a command that hangs outlives the test that timed out on it
 * otherwise, and may keep a core busy.
 */
export const killRunning = (): void => {
  for (const child of running) child.kill("SIGKILL")
}

/** Runs `command` from the repository's root; resolves once it has exited and closed its output. */
export const run = (command: string, args: ReadonlyArray<string>): Promise<Ran> =>
  new Promise((resolve, reject) => {
    // npx never installs: the command must be the workspace's own, linked at install (npm_config_yes=false).
    const child = spawn(command, args, {
      cwd: repoRoot,
      env: { ...process.env, npm_config_yes: "false" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    running.add(child)
    child.on("exit", () => running.delete(child))
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

export const accordConformance = (args: ReadonlyArray<string>): Promise<Ran> => run(process.execPath, [binJs, ...args])

/** The document `--json` prints; throws with what was printed when it is not one. */
export const reportOf = (ran: Ran): { readonly results: ReadonlyArray<AuditResult> } => {
  try {
    return JSON.parse(ran.stdout) as { readonly results: ReadonlyArray<AuditResult> }
  } catch {
    throw new Error(`not a JSON report (exit ${ran.code}):\n${ran.stdout}\n${ran.stderr}`)
  }
}

/** `tsc -b` of `packages` (incremental: quick when nothing changed), for a `beforeAll`. */
export const buildCompiled = (...packages: ReadonlyArray<string>): void => {
  execFileSync(process.execPath, [join(repoRoot, "node_modules/typescript/bin/tsc"), "-b", ...packages], {
    cwd: repoRoot,
    stdio: "pipe"
  })
}
