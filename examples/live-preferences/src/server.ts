import { randomBytes } from "node:crypto"
import { fileURLToPath } from "node:url"
import { accordPlugin } from "@accord/adapter-fastify"
import { Seed, StoreAdmin } from "@accord/domain"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { MemoryStoreLive } from "@accord/store-memory"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import { build } from "esbuild"
import Fastify from "fastify"

// The page's server: the page and its script at `/` and `/app.js`, Accord under `/api` on the same origin (so no
// CORS), over the memory store seeded with one user.

/** The page's script, bundled for the browser from page/app.ts (its imports from the built packages' dist). */
export const bundlePage = async (): Promise<string> => {
  const result = await build({
    entryPoints: [fileURLToPath(new URL("../page/app.ts", import.meta.url))],
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    write: false,
    logLevel: "silent"
  })
  return result.outputFiles[0]?.text ?? ""
}

const PAGE = `<!doctype html>
<html lang="en">
  <meta charset="utf-8" />
  <title>Preferences, live</title>
  <h1>Your preferences</h1>
  <dl>
    <dt>Language</dt>
    <dd id="language">…</dd>
    <dt>Time zone (minutes east of UTC)</dt>
    <dd id="timezone">…</dd>
    <dt>Two-factor authentication</dt>
    <dd id="mfa_enabled">…</dd>
  </dl>
  <p>Events: <span id="status">loading</span></p>
  <script type="module" src="/app.js"></script>
</html>
`

export interface LivePreferencesServer {
  /** Where the page is, without the token. */
  readonly url: string
  /** The seeded user's token: open `${url}/#token=${token}`. */
  readonly token: string
  readonly close: () => Promise<void>
}

export const startLivePreferences = async (
  options: { readonly host?: string; readonly port?: number } = {}
): Promise<LivePreferencesServer> => {
  const token = `live_${randomBytes(24).toString("base64url")}`
  const runtime = ManagedRuntime.make(Layer.mergeAll(MemoryStoreLive, ScryptPasswordHasherLive(testScryptCost)))
  const seed = Schema.decodeUnknownSync(Seed)({ users: [{ id: "u_1", token }] })
  await runtime.runPromise(Effect.flatMap(StoreAdmin, (admin) => admin.loadSeed(seed)))
  const script = await bundlePage()
  // Open streams are connections that never go idle: closing ends them rather than waiting for them.
  const app = Fastify({ forceCloseConnections: true })
  app.get("/", (_, reply) => reply.type("text/html; charset=utf-8").send(PAGE))
  app.get("/app.js", (_, reply) => reply.type("text/javascript; charset=utf-8").send(script))
  await app.register(accordPlugin, { prefix: "/api", runtime })
  app.addHook("onClose", () => runtime.dispose())
  const address = await app.listen({ host: options.host ?? "127.0.0.1", port: options.port ?? 3000 })
  return { url: address, token, close: () => app.close() }
}
