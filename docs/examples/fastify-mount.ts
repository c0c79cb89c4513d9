import Fastify from "fastify"
import { Layer, ManagedRuntime, Schema } from "effect"
import { Seed } from "@accord/domain"
import { ScryptPasswordHasherLive } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"
import { accordPlugin } from "@accord/adapter-fastify"

// Accord's runtime for a first run: an in-memory store holding user u_1, with the public demo token docs/curl.md uses,
// and two payment methods; and the password hasher. In production: your database and your tokens ("JWT configuration").
const seed = Schema.decodeUnknownSync(Seed)({
  users: [{ id: "u_1", token: "u1-demo-token-7f3c9a" }],
  payment_methods: [
    { id: "pm_1", user_id: "u_1", is_default: true },
    { id: "pm_2", user_id: "u_1" }
  ]
})
const runtime = ManagedRuntime.make(Layer.mergeAll(makeMemoryStore(seed), ScryptPasswordHasherLive()))

export const app = Fastify()
// The host's error handler, JSON parser and routes stay as they are...
app.setErrorHandler((error, _request, reply) => {
  reply.code(500).send({ error: error instanceof Error ? error.message : "something went wrong" })
})
app.get("/hello", async () => ({ hello: "world" }))
// ...and Accord is encapsulated under its prefix: its body handling and problem+json errors apply there only.
await app.register(accordPlugin, { prefix: "/api", runtime })
app.addHook("onClose", () => runtime.dispose())

await app.listen({ host: "127.0.0.1", port: Number(process.env.PORT ?? 3000) })
