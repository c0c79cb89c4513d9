import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { execFileSync } from "node:child_process"

/**
 * Instructions per request of stage rows (stages.ts), counted by callgrind, which the machine's load does not change:
 * `node bench/dist/stage-instructions.js ROW...` (a row: `framework/server/stage`, e.g. `fastify/accord/core`; the
 * rows stages.ts prints). Each row runs alone under `valgrind --tool=callgrind` (about 50 times slower), warms up, has
 * its counts zeroed (`callgrind_control -z`), answers `BENCH_STAGE_REQUESTS` requests (default 1000 here), and has
 * them dumped; the client in the same process is counted too, as in the CPU rows (the `node/node/floor` row has it).
 */

const here = dirname(fileURLToPath(import.meta.url))
const requests = Number(process.env["BENCH_STAGE_REQUESTS"] ?? 1000)

const countRow = (row: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const dir = mkdtempSync(join(tmpdir(), "accord-callgrind-"))
    const child = spawn(
      "valgrind",
      ["--tool=callgrind", `--callgrind-out-file=${join(dir, "cg.%p")}`, process.execPath, join(here, "stages.js")],
      {
        env: {
          ...process.env,
          BENCH_STAGE_ONLY: row,
          BENCH_STAGE_HANDSHAKE: "1",
          BENCH_STAGE_REQUESTS: String(requests),
          BENCH_STAGE_FRAMEWORKS: row.split("/")[0] ?? ""
        },
        stdio: ["pipe", "pipe", "inherit"]
      }
    )
    const pid = String(child.pid)
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
      if (out.includes("warm\n") && !out.includes("go")) {
        out += "go"
        execFileSync("callgrind_control", ["-z", pid], { stdio: "ignore" })
        child.stdin.write("go\n")
      }
      if (out.includes("done\n") && !out.includes("end")) {
        out += "end"
        execFileSync("callgrind_control", ["-d", pid], { stdio: "ignore" })
        const dump = readdirSync(dir).find((name) => name.endsWith(".1"))
        const summary = dump === undefined ? undefined : /^summary: (\d+)/m.exec(readFileSync(join(dir, dump), "utf8"))
        child.stdin.write("end\n")
        child.once("exit", () => rmSync(dir, { recursive: true, force: true }))
        if (summary?.[1] === undefined) reject(new Error(`${row}: no callgrind summary`))
        else resolve(Number(summary[1]) / requests)
      }
    })
    child.once("exit", (code) => {
      if (!out.includes("end")) reject(new Error(`${row}: exited (${code}) before its count`))
    })
  })

for (const row of process.argv.slice(2)) {
  const instructions = await countRow(row)
  console.log(`${row.padEnd(28)} ${(instructions / 1000).toFixed(1).padStart(8)} k instructions/request`)
}
