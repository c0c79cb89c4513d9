import { makeEagerHttpHandler, type HttpRequest, type HttpResponse } from "@accord/core"
import { ScryptPasswordHasherLive } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { createInterface } from "node:readline"
import { Layer, ManagedRuntime } from "effect"
import { benchHeaders, decodeSeed, scenarios, seedInput } from "./fixtures.js"

/**
 * Instructions per request of the core stage alone (issue 37): `makeEagerHttpHandler` on store-memory called
 * directly with a neutral request whose body came with its headers (as the Node bridge hands it over), no socket,
 * counted by callgrind, which the machine's load does not change. `node bench/dist/core-instructions.js
 * [language|payment-method ...]` runs each scenario alone under `valgrind --tool=callgrind`: it warms up
 * (`BENCH_CORE_WARMUP`, 20,000 requests), has its counts zeroed, answers `BENCH_CORE_REQUESTS` (20,000) requests,
 * and has them dumped. Where stage-instructions.ts counts a whole row (sockets and client included), this counts the
 * core's own work, so a change of a few hundred instructions a request shows.
 */

const warmup = Number(process.env["BENCH_CORE_WARMUP"] ?? 20_000)
const requests = Number(process.env["BENCH_CORE_REQUESTS"] ?? 20_000)

const child = async (scenarioId: string): Promise<void> => {
  const scenario = scenarios.find((candidate) => candidate.id === scenarioId)
  if (scenario === undefined) throw new Error(`no scenario ${scenarioId}`)
  const runtime = ManagedRuntime.make(
    Layer.merge(makeMemoryStore(decodeSeed(seedInput(1000))), ScryptPasswordHasherLive({ N: 2, r: 1, p: 1 }))
  )
  const handler = makeEagerHttpHandler({ runtime })
  const made = scenario.requests.map(({ path, body }): HttpRequest => {
    const bytes = new TextEncoder().encode(body)
    const read = { _tag: "Read" as const, bytes }
    const headers = { ...benchHeaders, "content-length": String(bytes.length) }
    return { method: "PUT", path, headers, readBody: () => Promise.resolve(read), readBodyNow: () => read }
  })
  let turn = 0
  const one = (): void => {
    const answer = handler(made[turn++ & 1] as HttpRequest)
    const check = (response: HttpResponse): void => {
      if (response.status !== 200) throw new Error(`the core answered ${response.status}`)
    }
    if (answer instanceof Promise) throw new Error("the core waited")
    check(answer)
  }
  for (let index = 0; index < warmup; index++) one()
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()
  process.stdout.write("warm\n")
  await lines.next()
  for (let index = 0; index < requests; index++) one()
  process.stdout.write("done\n")
  await lines.next()
  await runtime.dispose()
  process.exit(0)
}

const count = (scenarioId: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const dir = mkdtempSync(join(tmpdir(), "accord-callgrind-"))
    const running = spawn(
      "valgrind",
      [
        "--tool=callgrind",
        `--callgrind-out-file=${join(dir, "cg.%p")}`,
        process.execPath,
        // No compiler or GC threads: their work would land in the counted window as it happens to be scheduled.
        "--single-threaded",
        fileURLToPath(import.meta.url),
        "--child",
        scenarioId
      ],
      { stdio: ["pipe", "pipe", "inherit"] }
    )
    const pid = String(running.pid)
    let out = ""
    running.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
      if (out.includes("warm\n") && !out.includes("go")) {
        out += "go"
        execFileSync("callgrind_control", ["-z", pid], { stdio: "ignore" })
        running.stdin.write("go\n")
      }
      if (out.includes("done\n") && !out.includes("end")) {
        out += "end"
        execFileSync("callgrind_control", ["-d", pid], { stdio: "ignore" })
        const dump = readdirSync(dir).find((name) => name.endsWith(".1"))
        const summary = dump === undefined ? undefined : /^summary: (\d+)/m.exec(readFileSync(join(dir, dump), "utf8"))
        running.stdin.write("end\n")
        // BENCH_CORE_KEEP: keep the dump for callgrind_annotate (native code and V8's builtins by name).
        running.once("exit", () => {
          if (process.env["BENCH_CORE_KEEP"] === undefined) rmSync(dir, { recursive: true, force: true })
          else console.error(`callgrind dump kept in ${dir}`)
        })
        if (summary?.[1] === undefined) reject(new Error(`${scenarioId}: no callgrind summary`))
        else resolve(Number(summary[1]) / requests)
      }
    })
    running.once("exit", (code, signal) => {
      if (!out.includes("end")) reject(new Error(`${scenarioId}: exited (${code ?? signal}) before its count`))
    })
  })

if (process.argv[2] === "--child") await child(process.argv[3] ?? "language")
else
  for (const scenarioId of process.argv.length > 2 ? process.argv.slice(2) : ["language", "payment-method"]) {
    const instructions = await count(scenarioId)
    console.log(`core ${scenarioId.padEnd(16)} ${(instructions / 1000).toFixed(2).padStart(8)} k instructions/request`)
  }
