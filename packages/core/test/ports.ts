import {
  Authenticator,
  type ClientId,
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

/** The ports a test may give; each one it leaves out dies with the test's reason when called (a 500). */
export interface PortOverrides {
  readonly authenticator?: Authenticator["Service"]
  readonly planEntries?: PlanEntries["Service"]
  readonly preferences?: PreferencesStore["Service"]
  readonly paymentMethods?: PaymentMethods["Service"]
  readonly storeAdmin?: StoreAdmin["Service"]
  readonly passwordHasher?: PasswordHasher["Service"]
}

/**
 * A runtime over test ports: `overrides`, and for every other port methods that all do `port()` (by default a
 * defect), so a test sees at once a request that reached a port it did not expect.
 */
export const runtimeWithPorts = (
  overrides: PortOverrides,
  port: () => Effect.Effect<never> = () => Effect.die(new Error("a port this test does not expect was called"))
): AccordRuntime =>
  ManagedRuntime.make(
    Layer.mergeAll(
      Layer.succeed(Authenticator, overrides.authenticator ?? Authenticator.of({ authenticate: port })),
      Layer.succeed(
        PlanEntries,
        overrides.planEntries ?? PlanEntries.of({ insertIfAbsent: port, findByEmailKey: port })
      ),
      Layer.succeed(
        PreferencesStore,
        overrides.preferences ?? PreferencesStore.of({ getOrCreate: port, update: port })
      ),
      Layer.succeed(
        PaymentMethods,
        overrides.paymentMethods ?? PaymentMethods.of({ listByUser: port, setDefault: port })
      ),
      Layer.succeed(
        StoreAdmin,
        overrides.storeAdmin ?? StoreAdmin.of({ loadSeed: port, ping: port(), countCredentials: port() })
      ),
      Layer.succeed(PasswordHasher, overrides.passwordHasher ?? PasswordHasher.of({ hash: port, verify: port }))
    )
  )

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
