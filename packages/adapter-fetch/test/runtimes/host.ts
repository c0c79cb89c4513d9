import { makeFetchHandler } from "@accord/adapter-fetch"
import { Seed } from "@accord/domain"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"
import { Layer, ManagedRuntime, Schema } from "effect"

/**
 * The fetch handler served by Bun's or Deno's own server, as packages/adapter-fetch/README.md tells a user to
 * (`Bun.serve` / `Deno.serve` with `fetch`): one seeded user, a free port on 127.0.0.1, and the URL printed as the
 * first line of stdout. Run by runtimes.test.ts with `bun run host.ts` and `deno run -A host.ts`; the whole runtime
 * suite is issue 21's.
 */

type Fetch = (request: Request) => Promise<Response>
interface BunLike {
  readonly serve: (options: { readonly hostname: string; readonly port: number; readonly fetch: Fetch }) => {
    readonly port: number
  }
}
interface DenoLike {
  readonly serve: (
    options: { readonly hostname: string; readonly port: number; readonly onListen: (at: { port: number }) => void },
    handler: Fetch
  ) => unknown
}
const runtimes: typeof globalThis & { readonly Bun?: BunLike; readonly Deno?: DenoLike } = globalThis

export const RUNTIME_TOKEN = "runtime-smoke-token"
const seed = Schema.decodeUnknownSync(Seed)({ users: [{ id: "u_runtime", token: RUNTIME_TOKEN }] })
const runtime = ManagedRuntime.make(Layer.mergeAll(makeMemoryStore(seed), ScryptPasswordHasherLive(testScryptCost)))
await runtime.context()
const fetch = makeFetchHandler({ runtime, prefix: "/api" })

const hostname = "127.0.0.1"
if (runtimes.Bun !== undefined) {
  const server = runtimes.Bun.serve({ hostname, port: 0, fetch })
  console.log(`http://${hostname}:${server.port}`)
} else if (runtimes.Deno !== undefined) {
  runtimes.Deno.serve({ hostname, port: 0, onListen: ({ port }) => console.log(`http://${hostname}:${port}`) }, fetch)
} else {
  throw new Error("host.ts is run by Bun or Deno")
}
