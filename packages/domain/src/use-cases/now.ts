import { Clock, Effect } from "effect"

/** The current instant from Effect's Clock, so tests can move time with TestClock. */
export const now: Effect.Effect<Date> = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))
