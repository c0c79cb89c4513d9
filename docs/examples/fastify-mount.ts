import Fastify from "fastify"
import { Layer, ManagedRuntime, Result } from "effect"
import { ScryptPasswordHasherLive } from "@accord/node"
import { MemoryStoreLive } from "@accord/store-memory"
import { JwtAuthenticatorLive, jwtConfigFromEnv } from "@accord/auth-jwt"
import { accordPlugin } from "@accord/adapter-fastify"

// The settings of the server CLI's --auth jwt: JWT_SECRET or JWKS_URL, JWT_ISSUER, JWT_AUDIENCE, and the optional
// ones. A bad setting throws a JwtConfigError naming the variable (never a secret) before anything starts.
const jwt = Result.getOrThrowWith(jwtConfigFromEnv(process.env), (error) => error)
const runtime = ManagedRuntime.make(
  Layer.mergeAll(MemoryStoreLive, JwtAuthenticatorLive(jwt), ScryptPasswordHasherLive())
)

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
