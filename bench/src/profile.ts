import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { resolve } from "node:path"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { scenarios } from "./fixtures.js"
import { runLoad } from "./processes.js"
import { BENCH_SERVER_KINDS, isBenchServerKind, startBenchServer, writeSeedFile } from "./servers.js"

/**
 * Profiles one server under load: `node bench/dist/profile.js <kind> <scenario number> [seconds] [directory]
 * [connections]`, e.g. `node bench/dist/profile.js cli-fastify 0 10 profiles 50` for the CLI as users run it. The
 * server runs with `node --cpu-prof`; open the .cpuprofile it writes in Chrome DevTools (Performance) or VS Code.
 */

const [kind, scenarioIndex = "0", seconds = "10", directory = "profiles", connections = "10"] = process.argv.slice(2)
const scenario = scenarios[Number(scenarioIndex)]
if (!isBenchServerKind(kind) || scenario === undefined) {
  console.error(
    `usage: profile.js <${BENCH_SERVER_KINDS.join("|")}> <scenario 0|1> [seconds] [directory] [connections]`
  )
  process.exit(2)
}
const target = resolve(directory)
mkdirSync(target, { recursive: true })
const workDir = mkdtempSync(join(tmpdir(), "accord-profile-"))
const context = {
  users: Number(process.env["BENCH_USERS"] ?? 1000),
  workDir,
  execArgv: ["--cpu-prof", `--cpu-prof-dir=${target}`],
  // The SQL servers' PostgreSQL (their schemas are left behind: drop `bench_*_profile`).
  databaseUrl: process.env["BENCH_DATABASE_URL"] || undefined,
  runId: "profile"
}
writeSeedFile(context)
const server = await startBenchServer(kind, context)
// Long enough for V8 to have optimised the hot path: the first seconds of a fresh process are mostly compilation.
await runLoad(server.url, scenario, 4, Number(connections))
const result = await runLoad(server.url, scenario, Number(seconds), Number(connections))
await server.stop()
rmSync(workDir, { recursive: true, force: true })
console.log(
  `${kind} ${scenario.name}: ${result.requestsPerSecond.toFixed(0)} req/s, p99 ${result.p99Ms.toFixed(2)} ms; profile in ${target}`
)
