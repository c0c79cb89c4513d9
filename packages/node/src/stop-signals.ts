/**
 * When a process stops: the one rule for SIGTERM and SIGINT that `accord`, its cluster and a Node host share
 * (docs/operations.md, "Stopping").
 *
 * A stop often reaches a server twice within milliseconds: a terminal's Ctrl-C, systemd's `KillMode=control-group`
 * and many supervisors signal the whole process group, and a wrapper in that group (`npm start`, `npx`) forwards
 * its own copy to its child. Both copies are one request to stop. A person who wants out at once signals again,
 * later. So: the first signal starts the drain; one within `SIGNAL_REPEAT_WINDOW_MS` of it is the same stop
 * arriving by another route (the drain goes on); one after that ends the process without finishing the drain.
 */

export type StopSignal = "SIGTERM" | "SIGINT"

export const STOP_SIGNALS: ReadonlyArray<StopSignal> = ["SIGTERM", "SIGINT"]

/**
 * How long after the first stop signal another one is the same stop by another route. A forwarded copy comes within
 * milliseconds (one hop through the wrapper's event loop); a person's deliberate second Ctrl-C rarely within a second.
 */
export const SIGNAL_REPEAT_WINDOW_MS = 1_000

/** What a stop signal means: start the drain, the same stop again, or stop now. */
export type StopSignalVerdict = "drain" | "repeat" | "force"

/**
 * The rule alone, for a process's signals in arrival order: the first is `drain`, any other within `windowMs` of the
 * first `repeat`, any later one `force`. `now` is a monotonic clock in milliseconds.
 */
export const makeStopSignalRule = (
  windowMs: number = SIGNAL_REPEAT_WINDOW_MS,
  now: () => number = () => performance.now()
): (() => { readonly verdict: StopSignalVerdict; readonly sinceFirstMs: number }) => {
  let first: number | undefined
  return () => {
    const at = now()
    if (first === undefined) {
      first = at
      return { verdict: "drain", sinceFirstMs: 0 }
    }
    const sinceFirstMs = at - first
    return { verdict: sinceFirstMs < windowMs ? "repeat" : "force", sinceFirstMs }
  }
}

export interface StopSignalHandlers {
  /** The first SIGTERM or SIGINT: stop accepting, finish what was accepted, exit. */
  readonly drain: (signal: StopSignal) => void
  /** A signal within the window: the same stop by another route (the drain goes on). For a log line. */
  readonly repeat?: (signal: StopSignal, sinceFirstMs: number) => void
  /** A signal after the window: someone wants the process gone now (exit `128 + signal`, say). */
  readonly force: (signal: StopSignal, sinceFirstMs: number) => void
  /** Default `SIGNAL_REPEAT_WINDOW_MS`. */
  readonly windowMs?: number
}

/**
 * Handles SIGTERM and SIGINT by the rule above for the rest of the process's life (a handler stays installed, so a
 * repeated signal never meets Node's default, which would kill the process mid-drain). Returns a function that
 * removes the handlers.
 */
export const onStopSignals = (handlers: StopSignalHandlers): (() => void) => {
  const rule = makeStopSignalRule(handlers.windowMs)
  const onSignal = (signal: StopSignal): void => {
    const { verdict, sinceFirstMs } = rule()
    if (verdict === "drain") handlers.drain(signal)
    else if (verdict === "repeat") handlers.repeat?.(signal, sinceFirstMs)
    else handlers.force(signal, sinceFirstMs)
  }
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal)
  return () => {
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal)
  }
}
