import { Layer, ManagedRuntime, Schema } from "effect"
import { Seed } from "@accord/domain"
import { makeNodeRelay } from "@accord/node/bridge"
import { serve } from "@accord/node/server"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"

// The runtime: a store and the scrypt hasher (cheap cost for the example; production: ScryptPasswordHasherLive()).
const seed = Schema.decodeUnknownSync(Seed)({ users: [{ id: "u_1", token: "dev-token-u1" }] })
const runtime = ManagedRuntime.make(Layer.mergeAll(makeMemoryStore(seed), ScryptPasswordHasherLive(testScryptCost)))

// Accord on plain node:http, no framework: what each adapter's standalone server does around its own framework.
// `serve` makes the server (limits, guard, answers to malformed HTTP, drain) and listens (port 0: a free one).
const server = await serve({ runtime, port: 0 }, (options) => {
  const relay = makeNodeRelay(options)
  return (request, response) => relay(request, response)
})

const response = await fetch(`${server.url}/api/users/v1/preferences/language/`, {
  method: "PUT",
  headers: { authorization: "Bearer dev-token-u1", "content-type": "application/json" },
  body: JSON.stringify({ language: "EN-us", timezone: 60 })
})
console.log(response.status, await response.json())
// 200 { id: 1, language: 'en-US', timezone: 60, mfa_enabled: false, created_at: '...', updated_at: '...' }

// Stops accepting, answers what was accepted, then closes; the runtime is the host's to dispose of.
await server.close()
await runtime.dispose()
