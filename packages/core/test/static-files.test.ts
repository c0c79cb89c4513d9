import {
  Authenticator,
  makeHttpHandler,
  PasswordHasher,
  PaymentMethods,
  PlanEntries,
  PreferencesStore,
  StoreAdmin,
  type AccordRuntime,
  type DocsAssets
} from "@accord/core"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime } from "effect"

// Static files never reach a port: every port dies, so touching one would show as a 500.
const broken = (): Effect.Effect<never> => Effect.die(new Error("a static file reached a port"))
const runtime: AccordRuntime = ManagedRuntime.make(
  Layer.mergeAll(
    Layer.succeed(Authenticator, Authenticator.of({ authenticate: broken })),
    Layer.succeed(PlanEntries, PlanEntries.of({ insertIfAbsent: broken, findByEmailKey: broken })),
    Layer.succeed(PreferencesStore, PreferencesStore.of({ getOrCreate: broken, update: broken })),
    Layer.succeed(PaymentMethods, PaymentMethods.of({ listByUser: broken, setDefault: broken })),
    Layer.succeed(StoreAdmin, StoreAdmin.of({ loadSeed: broken, ping: broken() })),
    Layer.succeed(PasswordHasher, PasswordHasher.of({ hash: broken, verify: broken }))
  )
)
afterAll(() => runtime.dispose())

const utf8 = new TextEncoder()
const IMMUTABLE = "public, max-age=31536000, immutable"
const docs: DocsAssets = new Map([
  [
    "index.html",
    { contentType: "text/html; charset=utf-8", body: utf8.encode("<html></html>"), cacheControl: "no-cache" }
  ],
  ["app.js", { contentType: "text/javascript; charset=utf-8", body: utf8.encode("run()"), cacheControl: IMMUTABLE }],
  ["plain.css", { contentType: "text/css; charset=utf-8", body: utf8.encode("body{}") }]
])
const handler = makeHttpHandler({ runtime, docs })

// docs/api.md, "Headers on every response": a static file says its own Cache-Control, default no-store; the other
// common headers stay.
describe("static files (the docs option)", () => {
  it.each([
    ["GET", "/api/docs", "no-cache"],
    ["GET", "/api/docs/app.js", IMMUTABLE],
    ["HEAD", "/api/docs/app.js", IMMUTABLE],
    ["GET", "/api/docs/plain.css", "no-store"],
    ["GET", "/api/openapi.json", "no-store"]
  ])("%s %s: Cache-Control %s, with nosniff and a request id", async (method, path, cacheControl) => {
    const response = await handler({ method, path, headers: { "x-request-id": "static-1" } })
    expect(response.status).toBe(200)
    expect(response.headers).toMatchObject({
      "cache-control": cacheControl,
      "x-content-type-options": "nosniff",
      "x-request-id": "static-1"
    })
  })

  it("a missing file, OPTIONS and a refused method stay no-store problems or empty answers", async () => {
    for (const [method, path] of [
      ["GET", "/api/docs/missing.js"],
      ["OPTIONS", "/api/docs/app.js"],
      ["POST", "/api/docs/app.js"]
    ] as const) {
      const response = await handler({ method, path, headers: {} })
      expect(response.status, `${method} ${path}`).not.toBe(200)
      expect(response.headers["cache-control"], `${method} ${path}`).toBe("no-store")
    }
  })
})
