import { execFileSync } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { trimAsciiWhitespace } from "@accord/domain"

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "../../..")

/** The pattern the trim replaced (quadratic in the length of an inner whitespace run), as the reference result. */
const trimByPattern = (value: string): string => value.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, "")

describe("patterns applied to client input are linear (docs/SECURITY.md, quadratic email trim)", () => {
  it("trimAsciiWhitespace trims what the pattern trimmed, and only ASCII whitespace", () => {
    const text = fc.string({ unit: fc.constantFrom(" ", "\t", "\n", "\f", "\r", "\u00a0", "\u2003", "a", "@", ".") })
    fc.assert(
      fc.property(text, (value) => trimAsciiWhitespace(value) === trimByPattern(value)),
      { numRuns: 2000 }
    )
    expect(trimAsciiWhitespace("\u00a0 a \u00a0")).toBe("\u00a0 a \u00a0")
  })

  it("decodes an email holding 1 MB of inner whitespace at once (a quadratic trim cannot finish in the time-out)", () => {
    // In a child process with a time-out: a quadratic trim blocks its thread, which no in-process time-out can stop.
    // Linear, it takes about half a second; quadratic, minutes: the time-out sits far from both.
    execFileSync(process.execPath, [join(repoRoot, "node_modules/typescript/bin/tsc"), "-b", "packages/core"], {
      cwd: repoRoot
    })
    const script = `
      import { Effect } from "effect"
      import { decoderFor } from "@accord/domain"
      import { PlanEntryBody } from "@accord/contract"
      const email = "a" + " ".repeat(1_000_000) + "a"
      const result = Effect.runSync(Effect.flip(decoderFor(PlanEntryBody)({ email, password: "correct horse" })))
      process.stdout.write(JSON.stringify(result.issues))`
    const output = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: join(repoRoot, "packages/core"),
      timeout: 60_000,
      encoding: "utf8"
    })
    expect(JSON.parse(output)).toEqual([
      { pointer: "/email", code: "too_long", detail: "must be at most 254 characters" }
    ])
  }, 90_000)
})
