import { readFileSync } from "node:fs"

/**
 * npm runs a script, and npx its command, in `sh -c`; npm forwards SIGTERM and SIGINT to that shell, which passes
 * neither on (Debian's dash, say, runs even a single command as its child) and dies: the server keeps running with no
 * drain, and npm exits as if it had stopped. `exec` in the command puts the server in the shell's place. Nothing in
 * the server can make a shell forward, so at start it says so (README, "Deploying").
 */

const SHELLS = new Set(["sh", "dash", "bash", "ash", "zsh", "ksh", "mksh", "busybox"])

/** The name of this process's parent, from Linux's /proc; undefined elsewhere or when it cannot be read. */
const parentName = (): string | undefined => {
  try {
    return readFileSync(`/proc/${process.ppid}/comm`, "utf8").trim()
  } catch {
    return undefined
  }
}

/**
 * The warning for a server that npm started through a shell (so that a signal sent to npm never reaches it), with the
 * shell and npm's event (`npx`, `start`); undefined otherwise.
 */
export const shellParentWarning = (
  env: NodeJS.ProcessEnv = process.env,
  parent: () => string | undefined = parentName
):
  { readonly fields: { readonly parent: string; readonly npmEvent: string }; readonly message: string } | undefined => {
  const npmEvent = env["npm_lifecycle_event"]
  if (npmEvent === undefined || npmEvent === "") return undefined
  const name = parent()
  if (name === undefined || !SHELLS.has(name)) return undefined
  return {
    fields: { parent: name, npmEvent },
    message:
      "npm started this server through a shell, which passes no signal on: SIGTERM or SIGINT sent to npm will not " +
      'reach it; put exec before the command (npx -c \'exec accord ...\', "start": "exec accord ...")'
  }
}
