import { startExpressServer } from "@accord/adapter-express"
import { startFastifyServer } from "@accord/adapter-fastify"
import { makeFetchHandler } from "@accord/adapter-fetch"
import { startFetchServer } from "@accord/adapter-fetch/node"
import { startKoaServer } from "@accord/adapter-koa"
import type { AccordRuntime } from "@accord/core"
import type { RunningServer, StandaloneServerOptions } from "@accord/node/server"
import { makeAccordClient, type AccordClientMethods, type AccordClientOptions, type FetchLike } from "@accord/client"
import { makeAccordTestKit, type AccordTestKit } from "@accord/testkit"

/** Every adapter's standalone server, each on a real port. */
export const adapters: ReadonlyArray<
  readonly [name: string, start: (options: StandaloneServerOptions) => Promise<RunningServer>]
> = [
  ["koa", startKoaServer],
  ["fastify", startFastifyServer],
  ["express", startExpressServer],
  ["fetch", startFetchServer]
]

/** Where a client sends its requests: a server's base URL, or a fetch handler in process. */
export interface Target {
  readonly baseUrl: string
  readonly fetch?: FetchLike
  readonly close: () => Promise<void>
}

export const overPort =
  (start: (options: StandaloneServerOptions) => Promise<RunningServer>) =>
  async (runtime: AccordRuntime): Promise<Target> => {
    const server = await start({ runtime, host: "127.0.0.1", port: 0 })
    return { baseUrl: `${server.url}/api`, close: () => server.close() }
  }

/** The fetch handler itself: no socket, any absolute base URL (the handler reads only the path). */
export const inProcess = async (runtime: AccordRuntime): Promise<Target> => ({
  baseUrl: "http://accord.test/api",
  fetch: makeFetchHandler({ runtime, prefix: "/api" }),
  close: async () => undefined
})

/** A seeded store (user u_1 with pm_1 and pm_2, client web) behind a target, and clients for its credentials. */
export interface Fixture {
  readonly kit: AccordTestKit
  readonly target: Target
  /** A client with the given token (default: the user's). */
  readonly client: (token?: AccordClientOptions["token"] | null) => AccordClientMethods
  readonly close: () => Promise<void>
}

/** What makes a client: `@accord/client`'s `makeAccordClient` or `@accord/client/validated`'s. */
export type MakeClient = (options: AccordClientOptions) => AccordClientMethods

export const makeFixture = async (
  open: (runtime: AccordRuntime) => Promise<Target>,
  makeClient: MakeClient = makeAccordClient
): Promise<Fixture> => {
  const kit = await makeAccordTestKit()
  const target = await open(kit.runtime)
  return {
    kit,
    target,
    client: (token = kit.user.token) =>
      makeClient({
        baseUrl: target.baseUrl,
        ...(token !== null && { token }),
        ...(target.fetch !== undefined && { fetch: target.fetch })
      }),
    close: async () => {
      await target.close()
      await kit.dispose()
    }
  }
}
