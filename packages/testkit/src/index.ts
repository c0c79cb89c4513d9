import { randomBytes } from "node:crypto"
import {
  type ClientId,
  EventStore,
  type PaymentMethod,
  PaymentMethods,
  type RecordedEvent,
  Seed,
  type UserId
} from "@accord/domain"
import { makeFetchHandler } from "@accord/adapter-fetch"
import { followEvents, type EventFollower, type FollowEventsOptions } from "@accord/client/events-stream"
import { toEventEnvelope, type AccordEvent } from "@accord/contract"
import type { AccordRuntime } from "@accord/core"
import { ScryptPasswordHasherLive, testScryptCost, type ScryptHasherOptions } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"
import { Effect, Layer, ManagedRuntime, Result, Schema } from "effect"

export interface AccordTestKitOptions {
  /** The seeded user's id. Default `u_1`. */
  readonly userId?: string
  /** The seeded application (client) credential's id. Default `web`. */
  readonly clientId?: string
  /** The user's payment methods. Default `pm_1` and `pm_2`, neither the default. At most one `isDefault`. */
  readonly paymentMethods?: ReadonlyArray<{ readonly id: string; readonly isDefault?: boolean }>
  /** Password hashing cost. Default `testScryptCost` (cheap, same format as production). */
  readonly scrypt?: ScryptHasherOptions
}

export interface AccordTestKit {
  /** Memory store + scrypt hasher: pass it to an adapter, or run use cases with `runtime.runPromise`. */
  readonly runtime: AccordRuntime
  /** A user credential: `Authenticator.authenticate(token)` gives `Principal.User({ userId: id })`. */
  readonly user: { readonly id: UserId; readonly token: string }
  /** An application credential with no user: it may only create public plan entries. */
  readonly client: { readonly id: ClientId; readonly token: string }
  /** The user's payment methods as stored, ordered by id. */
  readonly paymentMethods: ReadonlyArray<PaymentMethod>
  /**
   * Every event the store recorded so far, oldest first, as a webhook's body, a NATS message and the feed carry it
   * (docs/api.md, "Events"): what a host's test asserts after running a use case, without HTTP or a receiver.
   */
  readonly events: () => Promise<ReadonlyArray<AccordEvent>>
  /**
   * Follows the user's events as a client does (`followEvents` from `@accord/client/events-stream`: the feed's
   * `text/event-stream` answer, resumed with `Last-Event-ID`), by default in process: the kit's runtime behind
   * `@accord/adapter-fetch`'s handler at `http://accord.test/api`, with the user's token. Any option of
   * `followEvents` replaces its default: `baseUrl` (with the global `fetch` unless `fetch` is given) for a server of
   * the host's serving `runtime`, `token` for another credential, `lastEventId`, `signal`, ...
   */
  readonly followEvents: (options?: Partial<FollowEventsOptions>) => EventFollower
  /** Releases the runtime; the kit is unusable afterwards. */
  readonly dispose: () => Promise<void>
}

/** A fresh random token in the Authorization token grammar (base64url), unique to this kit. */
const newToken = (kind: string) => `${kind}_${randomBytes(24).toString("base64url")}`

/** Where `kit.followEvents()` sends its requests by default: any absolute URL, the in-process handler reads the path. */
const IN_PROCESS_BASE_URL = "http://accord.test/api"

const decodeSeed = Schema.decodeUnknownResult(Seed)

/**
 * One call to a ready Accord runtime on an in-process store, seeded with a user, an application credential and the
 * user's payment methods, so a host can test its own code against Accord's use cases without HTTP or a database.
 * Each kit has its own store and its own random tokens. Rejects with a readable message when an option breaks a
 * seed rule (ids, at most one default payment method).
 */
export const makeAccordTestKit = async (options: AccordTestKitOptions = {}): Promise<AccordTestKit> => {
  const methods = options.paymentMethods ?? [{ id: "pm_1" }, { id: "pm_2" }]
  if (methods.filter((method) => method.isDefault === true).length > 1) {
    throw new Error("makeAccordTestKit: at most one payment method may be the default")
  }
  const userToken = newToken("user")
  const clientToken = newToken("client")
  const decoded = decodeSeed({
    users: [{ id: options.userId ?? "u_1", token: userToken }],
    clients: [{ id: options.clientId ?? "web", token: clientToken }],
    payment_methods: methods.map((method) => ({
      id: method.id,
      user_id: options.userId ?? "u_1",
      is_default: method.isDefault ?? false
    }))
  })
  if (Result.isFailure(decoded)) throw new Error(`makeAccordTestKit: invalid options\n${decoded.failure.message}`)
  const seed = decoded.success
  const [user] = seed.users
  const [client] = seed.clients
  if (user === undefined || client === undefined) throw new Error("makeAccordTestKit: the seed lost its credentials")

  const runtime: AccordRuntime = ManagedRuntime.make(
    Layer.merge(makeMemoryStore(seed), ScryptPasswordHasherLive(options.scrypt ?? testScryptCost))
  )
  // Made at the first in-process follower, then shared by the others.
  let handler: ((request: Request) => Promise<Response>) | undefined
  const inProcess = (request: Request) => (handler ??= makeFetchHandler({ runtime, prefix: "/api" }))(request)
  const paymentMethods = await runtime.runPromise(Effect.flatMap(PaymentMethods, (store) => store.listByUser(user.id)))
  return {
    runtime,
    user: { id: user.id, token: userToken },
    client: { id: client.id, token: clientToken },
    paymentMethods,
    events: async () => {
      const recorded: Array<RecordedEvent> = []
      for (;;) {
        const after: string | undefined = recorded.at(-1)?.id
        const page: ReadonlyArray<RecordedEvent> = await runtime.runPromise(
          Effect.flatMap(EventStore, (store) => store.list(after, 1000))
        )
        if (page.length === 0) return recorded.map(toEventEnvelope)
        recorded.push(...page)
      }
    },
    followEvents: (options = {}) =>
      followEvents({
        token: userToken,
        ...options,
        baseUrl: options.baseUrl ?? IN_PROCESS_BASE_URL,
        // The in-process handler only for the in-process base URL: another one is a server's, reached over the network.
        ...(options.fetch === undefined && options.baseUrl === undefined ? { fetch: inProcess } : {})
      }),
    dispose: () => runtime.dispose()
  }
}
