import { describe, expect, it } from "@effect/vitest"
import { LOGGED_PATH_MAX_LENGTH, loggedPath, MASK } from "../src/http/logged-path.js"

const known = new Set(["", "api", "subscription-plans", "payment-methods"])

describe("loggedPath (docs/SECURITY.md, item 16)", () => {
  it("keeps short segments and the route table's own, masks any other segment of 13 characters or more", () => {
    expect(loggedPath("/api/payment-methods/abcdefghijkl/abcdefghijklm", known)).toBe(
      `/api/payment-methods/abcdefghijkl/${MASK}`
    )
    expect(loggedPath("/api/subscription-plans/x", known)).toBe("/api/subscription-plans/x")
  })

  it("escapes every character outside printable ASCII, and the backslash", () => {
    expect(loggedPath("/a b/\n/\u0000/\\/é/\u2028", known)).toBe("/a\\x20b/\\x0a/\\x00/\\x5c/\\xe9/\\x2028")
  })

  it("caps the path and leaves the segment the cap cut out whole", () => {
    const secret = "s".repeat(10)
    const path = `/${"a".repeat(LOGGED_PATH_MAX_LENGTH - 5)}/${secret}`
    expect(loggedPath(path, known)).toBe(`/${MASK}/...`)
    expect(loggedPath(path, known)).not.toContain("sss")
  })

  it("reads no more than the cap of a 1 MB path (the test's time-out would catch a pass over all of it)", () => {
    const logged = loggedPath(`/${"\n".repeat(1_000_000)}`, known)
    expect(logged).toBe(`/...`)
    expect(loggedPath(`/${"\n/".repeat(500_000)}`, known).length).toBeLessThanOrEqual(LOGGED_PATH_MAX_LENGTH * 6)
  })
})
