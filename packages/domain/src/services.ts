import type { Authenticator } from "./ports/authenticator.js"
import type { EventStore } from "./ports/event-store.js"
import type { PasswordHasher } from "./ports/password-hasher.js"
import type { PaymentMethods } from "./ports/payment-methods.js"
import type { PlanEntries } from "./ports/plan-entries.js"
import type { PreferencesStore } from "./ports/preferences-store.js"
import type { StoreAdmin } from "./ports/store-admin.js"

/** What a store provides: every repository port, the events it recorded, the authenticator over its credentials, and admin. */
export type StoreServices = PlanEntries | PreferencesStore | PaymentMethods | EventStore | Authenticator | StoreAdmin

/** Everything the use cases need at run time: a store's services and the password hasher. */
export type AccordServices = StoreServices | PasswordHasher
