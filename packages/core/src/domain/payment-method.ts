import type { PaymentMethodId } from "@accord/contract"
import type { UserId } from "./ids.js"

export interface PaymentMethod {
  readonly id: PaymentMethodId
  readonly userId: UserId
  readonly isDefault: boolean
  readonly createdAt: Date
  readonly updatedAt: Date
}
