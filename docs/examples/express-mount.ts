import express, { type NextFunction, type Request, type Response } from "express"
import { Layer, ManagedRuntime, Result } from "effect"
import { ScryptPasswordHasherLive } from "@accord/node"
import { MemoryStoreLive } from "@accord/store-memory"
import { JwtAuthenticatorLive, jwtConfigFromEnv } from "@accord/auth-jwt"
import { accordExpressRouter } from "@accord/adapter-express"

// The same JWT settings from the environment as in the Fastify example.
const jwt = Result.getOrThrowWith(jwtConfigFromEnv(process.env), (error) => error)
const runtime = ManagedRuntime.make(
  Layer.mergeAll(MemoryStoreLive, JwtAuthenticatorLive(jwt), ScryptPasswordHasherLive())
)

const app = express()
// 1. Accord under /api, before any body parser: it reads its own request bodies.
app.use("/api", accordExpressRouter({ runtime }))
// 2. The host's body parser, routes and error handler after it: they never see Accord's requests.
app.use(express.json())
app.post("/echo", (req, res) => {
  res.json({ echo: req.body })
})
app.use((error: Error & { status?: number }, _req: Request, res: Response, _next: NextFunction) => {
  res.status(error.status ?? 500).json({ error: error.message })
})

export const server = app.listen(Number(process.env.PORT ?? 3000), "127.0.0.1")
server.on("close", () => void runtime.dispose())
