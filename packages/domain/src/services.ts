import type { Authenticator } from "./ports/authenticator.js"
import type { PasswordHasher } from "./ports/password-hasher.js"
import type { PaymentMethods } from "./ports/payment-methods.js"
import type { PlanEntries } from "./ports/plan-entries.js"
import type { PreferencesStore } from "./ports/preferences-store.js"
import type { StoreAdmin } from "./ports/store-admin.js"

/** What a store provides: every repository port, the authenticator over its credentials, and admin. */
export type StoreServices = PlanEntries | PreferencesStore | PaymentMethods | Authenticator | StoreAdmin

/** Everything the use cases need at run time: a store's services and the password hasher. */
export type AccordServices = StoreServices | PasswordHasher
