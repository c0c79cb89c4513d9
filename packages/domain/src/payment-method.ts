import type { UserId } from "./values/ids.js"
import type { PaymentMethodId } from "./values/payment-method-id.js"

export interface PaymentMethod {
  readonly id: PaymentMethodId
  readonly userId: UserId
  readonly isDefault: boolean
  readonly createdAt: Date
  readonly updatedAt: Date
}
