import Fastify from "fastify"
import { Layer, ManagedRuntime } from "effect"
import { accordPlugin } from "@accord/adapter-fastify"
import { loadApiReference } from "@accord/api-reference"
import { ScryptPasswordHasherLive } from "@accord/node"
import { MemoryStoreLive } from "@accord/store-memory"

const runtime = ManagedRuntime.make(Layer.mergeAll(MemoryStoreLive, ScryptPasswordHasherLive()))

// The API reference page is opt-in: with `docs`, Accord serves it at {prefix}/docs, its files under {prefix}/docs/.
const app = Fastify()
await app.register(accordPlugin, { prefix: "/api", runtime, docs: loadApiReference() })
app.addHook("onClose", () => runtime.dispose())

for (const url of ["/api/docs", "/api/docs/init.js", "/api/docs/swagger-ui.css", "/api/docs/swagger-ui-bundle.js"]) {
  const response = await app.inject({ method: "GET", url })
  console.log(response.statusCode, url, response.headers["content-type"])
}
await app.close()
// 200 /api/docs text/html; charset=utf-8
// 200 /api/docs/init.js text/javascript; charset=utf-8
// 200 /api/docs/swagger-ui.css text/css; charset=utf-8
// 200 /api/docs/swagger-ui-bundle.js text/javascript; charset=utf-8
