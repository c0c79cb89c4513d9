import type { EventType } from "./events.js"

/**
 * What the OpenAPI document says of each event type (its `webhooks`), and the example of its `data`: read by the
 * OpenAPI generator only, in a module of its own, so that a client's bundler leaves it out (as OPERATION_DOCS).
 */
export const EVENT_DOCS: {
  readonly [T in EventType]: { readonly summary: string; readonly description: string; readonly example: unknown }
} = {
  "plan_entry.created": {
    summary: "A public plan entry was created",
    description:
      "Sent once per address: a second entry with a known email changes nothing and sends nothing. The subject is `plan_entries/<the address lower-cased>`. Never carries the password or its hash.",
    example: { email: "ada@example.com" }
  },
  "preferences.updated": {
    summary: "A user's preferences changed",
    description:
      "The fields that changed, each with its old and new value (`language` canonical, `timezone` in minutes east of UTC). A write that changes nothing sends nothing. The subject is `users/<user id>`.",
    example: { changes: { language: { old: "en", new: "pt-BR" }, timezone: { old: 0, new: -180 } } }
  },
  "payment_method.default_changed": {
    summary: "A user's default payment method changed",
    description:
      "The new default and the one it replaced (`null` when there was none). Setting the current default again sends nothing. The subject is `users/<user id>`.",
    example: { payment_method_id: "pm_2", previous_default_id: "pm_1" }
  }
}
