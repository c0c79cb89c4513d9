import { Layer, ManagedRuntime, Schema } from "effect"
import { Seed } from "@accord/domain"
import { ScryptPasswordHasherLive } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"
import { makeFetchHandler } from "@accord/adapter-fetch"
import seedJson from "../../../seed.json" with { type: "json" }

// The fetch adapter's README module ("Bun, Deno, Cloudflare Workers"), with the memory store seeded from the
// repository's seed.json: one runtime per process (per isolate on Workers). The scrypt hasher needs node:crypto:
// Bun and Deno have it, Workers with `nodejs_compat`.
const seed = Schema.decodeUnknownSync(Seed)(seedJson)
export const runtime = ManagedRuntime.make(Layer.mergeAll(makeMemoryStore(seed), ScryptPasswordHasherLive()))

// A browser app on its own origin calls the API (docs/api.md, "CORS"): every answer then varies on Origin.
export const appOrigin = "https://app.example.com"

// The host's drain begins here (src/bun.ts, src/deno.ts): readiness turns false, and every open events stream ends
// after its last complete event, so that its client reconnects elsewhere with its Last-Event-ID and the server's wait
// for the requests in flight never waits on a stream (docs/api.md, "Events"). On Workers the platform drains.
let draining = false
let drainStarted = (): void => {}
const drainStartedPromise = new Promise<void>((resolve) => (drainStarted = resolve))
export const startDrain = (): void => {
  draining = true
  drainStarted()
}

export default {
  fetch: makeFetchHandler({
    runtime,
    prefix: "/api",
    corsOrigins: [appOrigin],
    isDraining: () => draining,
    drainStarted: drainStartedPromise
  })
}
