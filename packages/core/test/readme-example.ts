import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import { Seed } from "@accord/domain"
import { accordImplementations, makeHttpHandler } from "@accord/core"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"

// A runtime holding a store and the hasher, built once; the handler binds the contract's operations to it.
const seed = Schema.decodeUnknownSync(Seed)({ users: [{ id: "u_1", token: "readme-token" }] })
const runtime = ManagedRuntime.make(Layer.mergeAll(makeMemoryStore(seed), ScryptPasswordHasherLive(testScryptCost)))
const handler = makeHttpHandler({
  runtime,
  // Accord's map with one operation replaced: what a test stubs, or a host overrides.
  implementations: { ...accordImplementations, liveness: () => Effect.succeed({ status: "ok" as const }) }
})

// What every adapter does: a neutral request in (lower-case headers, the raw path, a body reader), a response out.
const body = new TextEncoder().encode('{"language":"EN-us"}')
const response = await handler({
  method: "PUT",
  path: "/api/users/v1/preferences/language/",
  headers: {
    authorization: "Bearer readme-token",
    "content-type": "application/json",
    "content-length": String(body.byteLength)
  },
  readBody: () => Promise.resolve({ _tag: "Read", bytes: body })
})
console.log(response.status, response.headers["etag"] !== undefined, response.body)
// 200 true {"id":1,"language":"en-US","timezone":0,"mfa_enabled":false,"created_at":"...","updated_at":"..."}
await runtime.dispose()
