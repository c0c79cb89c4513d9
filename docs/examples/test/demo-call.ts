import { expect } from "@effect/vitest"
import { readFileSync } from "node:fs"

/**
 * The request docs/embedding.md (section 2) tells a reader to make against any mount snippet, as printed there:
 * the snippets' seeded demo token and the path. Read from the guide, so the line the reader copies is the one tested.
 */
const guide = readFileSync(new URL("../../embedding.md", import.meta.url), "utf8")
const printed = /`curl -H 'Authorization: Bearer ([^']+)' http:\/\/127\.0\.0\.1:3000(\/api\/[^\s`]+)`/.exec(guide)
if (printed?.[1] === undefined || printed[2] === undefined) {
  throw new Error("docs/embedding.md no longer prints the curl line the mount snippets answer")
}
export const demoToken = printed[1]
export const demoPath = printed[2]

/** The guide's curl line against a snippet listening at `base`: 200 with the seeded user's payment methods. */
export const expectDemoCallAnswered = async (base: string) => {
  const response = await fetch(`${base}${demoPath}`, { headers: { authorization: `Bearer ${demoToken}` } })
  expect(response.status).toBe(200)
  const body = (await response.json()) as { data: ReadonlyArray<{ id: string; is_default: boolean }> }
  expect(body.data.map((method) => [method.id, method.is_default])).toEqual([
    ["pm_1", true],
    ["pm_2", false]
  ])
}

/** A token the snippet's store does not hold: 401 invalid_token, as docs/api.md says. */
export const expectUnknownTokenRefused = async (base: string) => {
  const response = await fetch(`${base}${demoPath}`, { headers: { authorization: "Bearer not-a-known-token" } })
  expect(response.status).toBe(401)
  expect(await response.json()).toMatchObject({ code: "invalid_token" })
}
