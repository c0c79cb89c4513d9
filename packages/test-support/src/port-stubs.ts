import {
  type AccordServices,
  Authenticator,
  type ClientId,
  EventStore,
  PasswordHasher,
  PaymentMethods,
  PlanEntries,
  PreferencesStore,
  Principal,
  StoreAdmin,
  Unauthenticated,
  type UserId
} from "@accord/domain"
import type { AccordRuntime } from "@accord/core"
import { Effect, Layer, ManagedRuntime } from "effect"

/**
 * The project's one stub of each port (docs/contributing.md, "Tests"): a test names only the methods it needs, and
 * every other method does `missing()`. A port method added to the domain is a compile error here, and nowhere else.
 */

/** The ports a test may stub, each by the part of its methods the test needs. */
export interface PortParts {
  readonly authenticator?: Partial<Authenticator["Service"]>
  readonly planEntries?: Partial<PlanEntries["Service"]>
  readonly preferences?: Partial<PreferencesStore["Service"]>
  readonly paymentMethods?: Partial<PaymentMethods["Service"]>
  readonly events?: Partial<EventStore["Service"]>
  readonly storeAdmin?: Partial<StoreAdmin["Service"]>
  readonly passwordHasher?: Partial<PasswordHasher["Service"]>
}

/** What a method the test did not name does: by default a defect (a 500), so a request that reached it shows. */
export type Missing = () => Effect.Effect<never>

const unexpected: Missing = () => Effect.die(new Error("a port this test does not expect was called"))

/** One port's layer: `part`'s methods, the others `missing()`. */
export const stubPort = {
  authenticator: (part: PortParts["authenticator"] = {}, missing: Missing = unexpected) =>
    Layer.succeed(Authenticator, Authenticator.of({ authenticate: missing, ...part })),
  planEntries: (part: PortParts["planEntries"] = {}, missing: Missing = unexpected) =>
    Layer.succeed(PlanEntries, PlanEntries.of({ insertIfAbsent: missing, findByEmailKey: missing, ...part })),
  preferences: (part: PortParts["preferences"] = {}, missing: Missing = unexpected) =>
    Layer.succeed(PreferencesStore, PreferencesStore.of({ getOrCreate: missing, update: missing, ...part })),
  paymentMethods: (part: PortParts["paymentMethods"] = {}, missing: Missing = unexpected) =>
    Layer.succeed(PaymentMethods, PaymentMethods.of({ listByUser: missing, setDefault: missing, ...part })),
  events: (part: PortParts["events"] = {}, missing: Missing = unexpected) =>
    Layer.succeed(
      EventStore,
      EventStore.of({
        listByOwner: missing,
        subscribe: missing,
        list: missing,
        dispatch: missing,
        retarget: missing,
        claimDue: missing,
        settle: missing,
        replayFailed: missing,
        countByStatus: missing(),
        countBySink: missing(),
        pruneDelivered: missing,
        ...part
      })
    ),
  storeAdmin: (part: PortParts["storeAdmin"] = {}, missing: Missing = unexpected) =>
    Layer.succeed(
      StoreAdmin,
      StoreAdmin.of({ loadSeed: missing, ping: missing(), countCredentials: missing(), ...part })
    ),
  passwordHasher: (part: PortParts["passwordHasher"] = {}, missing: Missing = unexpected) =>
    Layer.succeed(PasswordHasher, PasswordHasher.of({ hash: missing, verify: missing, ...part }))
}

/** Every port, stubbed by `parts`. */
export const stubPorts = (parts: PortParts, missing: Missing = unexpected): Layer.Layer<AccordServices> =>
  Layer.mergeAll(
    stubPort.authenticator(parts.authenticator, missing),
    stubPort.planEntries(parts.planEntries, missing),
    stubPort.preferences(parts.preferences, missing),
    stubPort.paymentMethods(parts.paymentMethods, missing),
    stubPort.events(parts.events, missing),
    stubPort.storeAdmin(parts.storeAdmin, missing),
    stubPort.passwordHasher(parts.passwordHasher, missing)
  )

/** A runtime over `stubPorts(parts, missing)`. */
export const runtimeWithPorts = (parts: PortParts, missing: Missing = unexpected): AccordRuntime =>
  ManagedRuntime.make(stubPorts(parts, missing))

/** The test tokens: `user-token` is user `u_1`, `client-token` the client `web`; any other is `invalid_token`. */
export const TEST_PRINCIPALS: Readonly<Record<string, Principal>> = {
  "user-token": Principal.User({ userId: "u_1" as UserId }),
  "client-token": Principal.Client({ clientId: "web" as ClientId })
}

/** An authenticator that knows the tokens of `principals`. */
export const tokenTableAuthenticator = (
  principals: Readonly<Record<string, Principal>> = TEST_PRINCIPALS
): Authenticator["Service"] =>
  Authenticator.of({
    authenticate: (token) => {
      const principal = principals[token]
      return principal === undefined
        ? Effect.fail(new Unauthenticated({ reason: "invalid_token" }))
        : Effect.succeed(principal)
    }
  })
