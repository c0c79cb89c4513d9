import { describe, expect, it, vi } from "@effect/vitest"

describe("docs/examples/use-cases.ts", () => {
  it("runs and prints what its closing comments say", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined)
    try {
      await import("../use-cases.js")
      expect(log.mock.calls).toStrictEqual([
        [{ defaultMethod: "pm_bank", language: "de-AT", timezone: 60 }],
        ["/timezone: invalid_format"]
      ])
    } finally {
      log.mockRestore()
    }
  })
})
