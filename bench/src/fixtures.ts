import { Schema } from "effect"
import { Seed, type SeedInput } from "@accord/domain"
import { paymentMethodIds, userId, userToken } from "./workload.js"

/**
 * The data every benchmarked server starts with: `users` users, each with one token and three payment methods. The
 * users and the requests themselves live in workload.ts (no Accord import) and are re-exported from here.
 */

export * from "./workload.js"

export const seedInput = (users: number): SeedInput => {
  const input: {
    users: Array<{ id: string; token: string }>
    payment_methods: Array<{ id: string; user_id: string; is_default: boolean }>
  } = {
    users: [],
    payment_methods: []
  }
  for (let index = 0; index < users; index++) {
    input.users.push({ id: userId(index), token: userToken(index) })
    for (const id of paymentMethodIds(index))
      input.payment_methods.push({ id, user_id: userId(index), is_default: false })
  }
  return input
}

export const decodeSeed = (input: SeedInput): Seed => Schema.decodeUnknownSync(Seed)(input)
