import type { Email } from "@accord/contract"

/** The key that makes two addresses the same account: the whole address, case-insensitively. */
export const emailKey = (email: Email): string => email.toLowerCase()
