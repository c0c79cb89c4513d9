import Fastify from "fastify"
import { Layer, ManagedRuntime } from "effect"
import { accordPlugin } from "@accord/adapter-fastify"
import { loadApiReference } from "@accord/api-reference"
import { ScryptPasswordHasherLive } from "@accord/node/scrypt"
import { MemoryStoreLive } from "@accord/store-memory"

const runtime = ManagedRuntime.make(Layer.mergeAll(MemoryStoreLive, ScryptPasswordHasherLive()))

// The API reference page is opt-in: with `docs`, Accord serves it at {prefix}/docs, its files under {prefix}/docs/.
const app = Fastify()
await app.register(accordPlugin, { prefix: "/api", runtime, docs: loadApiReference() })
app.addHook("onClose", () => runtime.dispose())

const files = ["", "/init.js", "/favicon.svg", "/swagger-ui.css", "/swagger-ui-bundle.js"]
for (const url of files.map((file) => `/api/docs${file}`)) {
  const response = await app.inject({ method: "GET", url })
  console.log(response.statusCode, url, response.headers["content-type"], response.headers["cache-control"])
}
await app.close()
// 200 /api/docs text/html; charset=utf-8 no-cache
// 200 /api/docs/init.js text/javascript; charset=utf-8 no-cache
// 200 /api/docs/favicon.svg image/svg+xml no-cache
// 200 /api/docs/swagger-ui.css text/css; charset=utf-8 public, max-age=31536000, immutable
// 200 /api/docs/swagger-ui-bundle.js text/javascript; charset=utf-8 public, max-age=31536000, immutable
