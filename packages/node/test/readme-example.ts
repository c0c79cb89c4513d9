import { createServer } from "node:http"
import { Layer, ManagedRuntime, Schema } from "effect"
import { Seed } from "@accord/core"
import {
  answerClientError,
  closeIfBodyUnread,
  drainOnClose,
  listen,
  makeNodeHttpHandler,
  nodeServerOptions,
  responsePayload,
  ScryptPasswordHasherLive,
  testScryptCost,
  toHttpRequest
} from "@accord/node"
import { makeMemoryStore } from "@accord/store-memory"

// The runtime: a store and the scrypt hasher (cheap cost for the example; production: ScryptPasswordHasherLive()).
const seed = Schema.decodeUnknownSync(Seed)({ users: [{ id: "u_1", token: "dev-token-u1" }] })
const runtime = ManagedRuntime.make(Layer.mergeAll(makeMemoryStore(seed), ScryptPasswordHasherLive(testScryptCost)))

// Accord on plain node:http, no framework: what each adapter does around its own framework.
const handler = makeNodeHttpHandler({ runtime, prefix: "/api" })
const server = createServer(nodeServerOptions({ runtime }), async (request, response) => {
  const answer = await handler(toHttpRequest(request))
  closeIfBodyUnread(request, response)
  response.writeHead(answer.status, answer.headers).end(responsePayload(answer.body))
})
server.on("clientError", answerClientError)
const drain = drainOnClose(server)
const url = await listen(server, "127.0.0.1", 0)

const response = await fetch(`${url}/api/users/v1/preferences/language/`, {
  method: "PUT",
  headers: { authorization: "Bearer dev-token-u1", "content-type": "application/json" },
  body: JSON.stringify({ language: "EN-us", timezone: 60 })
})
console.log(response.status, await response.json())
// 200 { id: 1, language: 'en-US', timezone: 60, mfa_enabled: false, created_at: '...', updated_at: '...' }

// Stops accepting, answers what was accepted, then closes; the runtime is the host's to dispose of.
await drain()
await runtime.dispose()
