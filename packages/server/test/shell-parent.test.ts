import { describe, expect, it } from "@effect/vitest"
import { shellParentWarning } from "../src/shell-parent.js"

// The processes themselves: signal-routes.test.ts (npx without exec warns; every printed command does not).
describe("the warning for a server npm started through a shell", () => {
  it("names the shell and npm's event when npm ran the server as a shell's child", () => {
    for (const shell of ["sh", "dash", "bash"])
      expect(shellParentWarning({ npm_lifecycle_event: "npx" }, () => shell)?.fields).toEqual({
        parent: shell,
        npmEvent: "npx"
      })
    expect(shellParentWarning({ npm_lifecycle_event: "start" }, () => "sh")?.message).toContain("exec")
  })

  it("says nothing when npm runs the server itself (exec), outside npm, or where the parent cannot be read", () => {
    expect(shellParentWarning({ npm_lifecycle_event: "start" }, () => "node")).toBeUndefined()
    expect(shellParentWarning({ npm_lifecycle_event: "npx" }, () => "npm exec exec node")).toBeUndefined()
    expect(shellParentWarning({}, () => "sh")).toBeUndefined()
    expect(shellParentWarning({ npm_lifecycle_event: "" }, () => "sh")).toBeUndefined()
    expect(shellParentWarning({ npm_lifecycle_event: "npx" }, () => undefined)).toBeUndefined()
  })
})
