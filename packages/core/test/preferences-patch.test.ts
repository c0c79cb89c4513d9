import { describe, expect, it } from "@effect/vitest"
import { applyPatch, LanguageTag, type Preferences, TimezoneOffset } from "@accord/domain"

const at = (minutes: number): Date => new Date(Date.UTC(2030, 0, 1, 0, minutes))
const stored: Preferences = {
  id: 1,
  language: LanguageTag.make("en"),
  timezone: TimezoneOffset.make(0),
  mfaEnabled: false,
  createdAt: at(0),
  updatedAt: at(10)
}

describe("applyPatch (docs/api.md, Resources: updated_at)", () => {
  it("moves updatedAt to the write's instant on a real change", () => {
    expect(applyPatch(stored, { mfaEnabled: true }, at(20))).toEqual({ ...stored, mfaEnabled: true, updatedAt: at(20) })
  })

  it("never moves updatedAt backwards: an instant taken before the stored write keeps the stored one", () => {
    // docs/SECURITY.md, "updated_at goes backwards": the instant is taken before the store's lock.
    expect(applyPatch(stored, { timezone: TimezoneOffset.make(60) }, at(5))).toEqual({
      ...stored,
      timezone: 60,
      updatedAt: at(10)
    })
  })

  it("returns the same record when nothing changes", () => {
    expect(applyPatch(stored, { language: LanguageTag.make("en") }, at(20))).toBe(stored)
  })
})
