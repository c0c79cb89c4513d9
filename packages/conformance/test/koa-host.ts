import { accordRouter } from "@accord/adapter-koa"
import type { StartAdapter } from "@accord/test-support"
import type { Context, Next } from "koa"
import Koa from "koa"
import { listen } from "@accord/node/server"
import { createServer } from "node:http"

export interface KoaHostOptions {
  /** Serve the API reference page (`docs`), as the standalone servers do. */
  readonly docs: boolean
  /** The one rule broken on purpose: a 405 loses its `Allow` header (docs/api.md, "Precise rules"). */
  readonly dropAllowOn405: boolean
}

/**
 * A Koa app that mounts Accord under /api as a host does (`accordRouter`, packages/adapter-koa/README.md): Koa's own
 * 404 outside the prefix, the API reference page only when asked, and optionally one rule broken. For `startWith`,
 * which seeds a memory store and passes the runtime.
 */
export const koaHost =
  (host: KoaHostOptions): StartAdapter =>
  async ({ docs, ...options }) => {
    const app = new Koa()
    if (host.dropAllowOn405) {
      app.use(async (ctx: Context, next: Next) => {
        await next()
        if (ctx.status === 405) ctx.remove("Allow")
      })
    }
    app.use(accordRouter(host.docs && docs !== undefined ? { ...options, docs } : options).routes())
    const server = createServer(app.callback())
    const url = await listen(server, options.host ?? "127.0.0.1", options.port ?? 0)
    return {
      url,
      close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())))
    }
  }
