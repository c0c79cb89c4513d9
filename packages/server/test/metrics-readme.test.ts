import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { createMetrics } from "../src/index.js"

// The README's metrics table ("Metrics (`--metrics-port`)") against the metrics the server registers with every
// part observed: the pool's and the relay's exist once a pool or a relay runs, so the test observes one of each.

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8")

/** The `accord_*` names in the first column of the README's metrics table. */
const documented = (): ReadonlyArray<string> => {
  const section = readme.slice(readme.indexOf("## Metrics (`--metrics-port`)"))
  const table = section.slice(section.indexOf("| metric |"), section.indexOf("\n\n", section.indexOf("| metric |")))
  return table
    .split("\n")
    .flatMap((row) => [...(row.split("|")[1] ?? "").matchAll(/`(accord_[a-z_]+)`/g)].map((match) => match[1] ?? ""))
}

describe("the README's metrics table", () => {
  it("names every accord_ metric the server registers, and no other", async () => {
    const metrics = createMetrics()
    metrics.observePool({ total: 1, idle: 1, waiting: 0, max: 10 })
    // A webhook and NATS: the NATS gauge exists only with a NATS sink.
    metrics.observeEvents({
      sinks: ["webhook:0123456789abcdef", "nats"],
      countByStatus: async () => ({ pending: 0, delivered: 0, failed: 0 }),
      countBySink: async () => []
    })
    const registered = (await metrics.registry.getMetricsAsJSON())
      .map((metric) => metric.name)
      .filter((name) => name.startsWith("accord_"))
    expect(registered).toContain("accord_events")
    expect([...documented()].sort()).toEqual([...registered].sort())
  })
})
