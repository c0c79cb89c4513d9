import { readFileSync } from "node:fs"
import { join } from "node:path"
import { npmCommand, repoRoot, spawnCli, spawnCommand, spawnNpmStart, type Cli, type SpawnOptions } from "./cli-helpers.js"

/**
 * The commands the docs print to run the server from a clone, each as the signal matrix runs it
 * (signal-routes.test.ts); readme-commands.test.ts checks that the docs print no other kind.
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
    spawn: (args, options) => {
      const [npx, ...npxArgs] = npmCommand("npx")
      // npx fetches the pinned node once; the suite warms its cache before running the command side by side.
      return spawnCommand(npx, [...npxArgs, "-y", "-p", `node@${pinnedNode}`, "--", "exec", "node", binJs, ...args], {
        npm_config_prefer_offline: "true"
      }, options)
    }
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
