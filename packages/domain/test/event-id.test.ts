import { describe, expect, it } from "@effect/vitest"
import { newEventId } from "@accord/domain"

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe("newEventId", () => {
  it("is a UUIDv7 whose first 48 bits are the millisecond", () => {
    const at = Date.UTC(2031, 0, 1)
    const id = newEventId(at)
    expect(id).toMatch(UUID_V7)
    expect(parseInt(id.replace("-", "").slice(0, 12), 16)).toBe(at)
  })

  it("sorts in the order made: within one millisecond, past 4096 in it, and when the clock steps back", () => {
    const at = Date.UTC(2032, 0, 1)
    const ids = [...Array.from({ length: 5000 }, () => newEventId(at)), newEventId(at - 1000), newEventId(at + 5000)]
    expect(new Set(ids).size).toBe(ids.length)
    expect([...ids].sort()).toEqual(ids)
    for (const id of ids) expect(id).toMatch(UUID_V7)
  })
})
