import { describe, expect, it, vi } from "@effect/vitest"

describe("docs/examples/event-sink.ts", () => {
  it("delivers the change's event to the host's own sink and prints its type", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined)
    try {
      await import("../event-sink.js")
      expect(log.mock.calls).toStrictEqual([[["preferences.updated"]]])
    } finally {
      log.mockRestore()
    }
  })
})
