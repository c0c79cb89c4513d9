import type { SeedInput } from "@accord/domain"
import { createHash } from "node:crypto"

// The fuzz's fixture: two users with payment methods and an application, every id and token derived from a label (the
// seed), so that a run replays exactly on a fresh store.

export interface FuzzUser {
  readonly id: string
  readonly token: string
  /** The user's payment method ids in code-point order; the first is seeded as the default. */
  readonly methods: ReadonlyArray<string>
}

export interface FuzzFixture {
  readonly seed: SeedInput
  readonly a: FuzzUser
  readonly b: FuzzUser
  readonly client: { readonly id: string; readonly token: string }
}

/** Ids and tokens derived from `label` (e.g. the fuzz seed), so a run replays exactly on a fresh store. */
export const makeFuzzFixture = (label: string): FuzzFixture => {
  const derived = (name: string) => createHash("sha256").update(`${label}:${name}`).digest("base64url").slice(0, 32)
  const tag = createHash("sha256").update(label).digest("hex").slice(0, 8)
  // "-" < "0" < "B" < "_" < "a": code-point order, which a locale collation would not give.
  const a: FuzzUser = {
    id: `fuzz_a_${tag}`,
    token: `fz-a.${derived("a")}`,
    methods: [`-a${tag}`, `0a${tag}`, `Ba${tag}`, `_a${tag}`, `aa${tag}`]
  }
  const b: FuzzUser = { id: `fuzz_b_${tag}`, token: `fz-b.${derived("b")}`, methods: [`Bb${tag}`, `bb${tag}`] }
  const client = { id: `fuzz_client_${tag}`, token: `fz-c.${derived("client")}` }
  const seed: SeedInput = {
    users: [
      { id: a.id, token: a.token },
      { id: b.id, token: b.token }
    ],
    clients: [client],
    payment_methods: [a, b].flatMap((user) =>
      user.methods.map((id, index) => ({ id, user_id: user.id, is_default: index === 0 }))
    )
  }
  return { seed, a, b, client }
}
