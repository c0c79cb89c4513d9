import { readFileSync } from "node:fs"
import { startFastifyServer } from "@accord/adapter-fastify"
import { runHttpConformance, runStoreContract, startWith } from "@accord/conformance"
import { MemoryStoreLive } from "@accord/store-memory"
import { describe, expect, it } from "@effect/vitest"

// The README's example, run as written (both suites, against the memory store and the Fastify adapter).
runStoreContract("memory store", MemoryStoreLive)
runHttpConformance("fastify adapter", startWith(startFastifyServer))

describe("README", () => {
  it("shows the code this file runs", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8")
    expect(readme).toContain('runStoreContract("memory store", MemoryStoreLive)')
    expect(readme).toContain('runHttpConformance("fastify adapter", startWith(startFastifyServer))')
  })
})
