/** The later of two instants: a record's `updatedAt` never moves backwards (docs/api.md, "Precise rules"). */
export const notBefore = (instant: Date, stored: Date): Date =>
  instant.getTime() >= stored.getTime() ? instant : stored
