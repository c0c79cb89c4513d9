import { mkdirSync } from "node:fs"
import { resolve } from "node:path"
import { scenarios } from "./fixtures.js"
import { forkChild, messageOf, runLoad, stopChild } from "./processes.js"
import { isServerKind, SERVER_KINDS } from "./protocol.js"

/**
 * Profiles one server under load: `node bench/dist/profile.js <kind> <scenario number> [seconds] [directory]`, e.g.
 * `node bench/dist/profile.js fastify-accord 0 10 profiles`. The server runs with `node --cpu-prof`; open the
 * .cpuprofile it writes in Chrome DevTools (Performance) or VS Code.
 */

const [kind, scenarioIndex = "0", seconds = "10", directory = "profiles"] = process.argv.slice(2)
const scenario = scenarios[Number(scenarioIndex)]
if (!isServerKind(kind) || scenario === undefined) {
  console.error(`usage: profile.js <${SERVER_KINDS.join("|")}> <scenario 0|1> [seconds] [directory]`)
  process.exit(2)
}
const target = resolve(directory)
mkdirSync(target, { recursive: true })
const child = forkChild(
  "server.js",
  [kind, process.env["BENCH_USERS"] ?? "1000"],
  ["--cpu-prof", `--cpu-prof-dir=${target}`]
)
const { url } = await messageOf(child, "ready")
// Long enough for V8 to have optimised the hot path: the first seconds of a fresh process are mostly compilation.
await runLoad(url, scenario, 4, 10)
const result = await runLoad(url, scenario, Number(seconds), 10)
await stopChild(child)
console.log(
  `${kind} ${scenario.name}: ${result.requestsPerSecond.toFixed(0)} req/s, p99 ${result.p99Ms.toFixed(2)} ms; profile in ${target}`
)
