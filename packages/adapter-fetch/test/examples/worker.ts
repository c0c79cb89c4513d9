import { Layer, ManagedRuntime } from "effect"
import { ScryptPasswordHasherLive } from "@accord/node/scrypt"
import { MemoryStoreLive } from "@accord/store-memory"
import { makeFetchHandler } from "@accord/adapter-fetch"

// One runtime per process (per isolate on Workers, whose memory store is then per isolate too: use a database store
// for anything real). The scrypt hasher needs node:crypto: Bun and Deno have it, Workers with `nodejs_compat`.
const runtime = ManagedRuntime.make(Layer.mergeAll(MemoryStoreLive, ScryptPasswordHasherLive()))

// Bun (`bun run worker.ts`), Deno (`deno serve worker.ts`) and Cloudflare Workers call `fetch` for every request.
export default { fetch: makeFetchHandler({ runtime, prefix: "/api" }) }
