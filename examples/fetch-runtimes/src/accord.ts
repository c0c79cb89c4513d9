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

export default { fetch: makeFetchHandler({ runtime, prefix: "/api", corsOrigins: [appOrigin] }) }
