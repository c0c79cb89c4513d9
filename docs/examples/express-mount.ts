import express, { type NextFunction, type Request, type Response } from "express"
import { Layer, ManagedRuntime, Schema } from "effect"
import { Seed } from "@accord/domain"
import { ScryptPasswordHasherLive } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"
import { accordExpressRouter } from "@accord/adapter-express"

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
