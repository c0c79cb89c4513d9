import { type AccordEvent, EventStreamError, followEvents } from "@accord/client/events-stream"
import { cpuSecondsOf, forkChild, messageOf, stopChild } from "./processes.js"
import type { ChildMessage, StreamsResult } from "./protocol.js"
import { LANGUAGE_PATH, userToken } from "./workload.js"

/**
 * Issue 39's figures, in a child of the bench (as events.ts): `BENCH_STREAMS` users (default 1000) each follow their
 * events (`followEvents` of @accord/client/events-stream, over the global fetch) from one server process
 * (streams-server.ts: Accord on Fastify over the memory store, started with --expose-gc); then (a) one user's change,
 * one after the other, each timed from the write sent to its stream receiving it, with every other stream open and
 * idle; (b) a change per user, `CONCURRENCY` writes at once: events per second delivered, from the first write to the
 * last stream receiving its event, and from the last write's answer to the last event; (c) the server's memory after
 * GC before the streams and with them open, per stream. Fails, saying so, when the server does not stream.
 */

const streams = Number(process.env["BENCH_STREAMS"] ?? 1000)
/** One user's changes, one after the other. */
const ONE_USER_SAMPLES = 20
/** Writes in flight at once in the per-user phase. */
const CONCURRENCY = 20
/** How long the bench waits for what should take a fraction of it, before it says what did not arrive. */
const DEADLINE_MS = 120_000

const percentile = (values: ReadonlyArray<number>, p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN
}

const main = async (): Promise<void> => {
  if (process.send === undefined) throw new Error("streams.js is started by the bench with fork()")
  const server = forkChild("streams-server.js", [String(streams)], ["--expose-gc"])
  const stop = new AbortController()
  try {
    const { url } = await messageOf(server, "ready")
    const baseUrl = `${url}/api`
    const usage = async () => {
      const answer = messageOf(server, "usage")
      server.send({ type: "usage" })
      const { rss, heapUsed } = await answer
      return { rss, heapUsed }
    }
    const before = await usage()

    // What each stream received: the arrival time of each event, by user.
    const arrivals: Array<Array<number>> = Array.from({ length: streams }, () => [])
    const opened = new Set<number>()
    let failure: Error | undefined
    const listeners = new Set<() => void>()
    const notify = () => {
      for (const listener of [...listeners]) listener()
    }
    const fail = (index: number, error: unknown) => {
      failure ??=
        error instanceof EventStreamError && error.reason === "not_a_stream"
          ? new Error(
              `streams: the server does not stream events (${error.message}): this section needs issue 39's server side`
            )
          : new Error(`streams: stream ${index} failed: ${error instanceof Error ? error.message : String(error)}`, {
              cause: error
            })
      notify()
    }
    const follow = async (index: number) => {
      const follower = followEvents({
        baseUrl,
        token: userToken(index),
        signal: stop.signal,
        onState: (state) => {
          if (state.state === "open") opened.add(index)
          // Refused before it opened (a bound on streams per credential or in total): the figures would mean nothing.
          else if (state.state === "waiting" && state.status !== undefined && !opened.has(index))
            fail(index, new Error(`refused ${state.status} (the server's bound on streams?)`))
          notify()
        }
      })
      for await (const _ of follower as AsyncIterable<AccordEvent>) {
        arrivals[index]?.push(performance.now())
        notify()
      }
    }
    const started = performance.now()
    for (let index = 0; index < streams; index++) void follow(index).catch((error: unknown) => fail(index, error))
    /** Resolves when `done()` holds, checked at each event; rejects on a follower's failure or after the deadline. */
    const wait = (what: string, done: () => boolean) =>
      new Promise<void>((resolve, reject) => {
        const finish = () => {
          clearTimeout(timer)
          listeners.delete(check)
        }
        const check = () => {
          if (failure !== undefined) {
            finish()
            reject(failure)
          } else if (done()) {
            finish()
            resolve()
          }
        }
        const timer = setTimeout(() => {
          finish()
          reject(new Error(`streams: ${what} did not happen within ${DEADLINE_MS / 1000} s`))
        }, DEADLINE_MS)
        listeners.add(check)
        check()
      })
    await wait(`${streams} streams opening`, () => opened.size === streams)
    const openSeconds = (performance.now() - started) / 1000
    const open = await usage()

    const write = async (index: number, timezone: number) => {
      const response = await fetch(`${url}${LANGUAGE_PATH}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${userToken(index)}`, "content-type": "application/json" },
        body: JSON.stringify({ timezone })
      })
      await response.arrayBuffer()
      if (response.status !== 200) throw new Error(`streams: a write answered ${response.status}`)
    }

    // (a) One user's changes, one after the other.
    const oneUser: Array<number> = []
    for (let sample = 1; sample <= ONE_USER_SAMPLES; sample++) {
      const sent = performance.now()
      await write(0, sample % 2 === 0 ? 120 : 60)
      await wait(`user 0's event ${sample}`, () => (arrivals[0]?.length ?? 0) >= sample)
      oneUser.push((arrivals[0]?.[sample - 1] ?? Number.NaN) - sent)
    }

    // (b) A change per user.
    const already = arrivals.map((times) => times.length)
    const sentAt: Array<number> = []
    let lastAnswer = 0
    const cpuBefore = cpuSecondsOf(server.pid)
    const firstSent = performance.now()
    let next = 0
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < streams) {
          const index = next++
          sentAt[index] = performance.now()
          // Every user's timezone is 0 but user 0's (60 or 120 after (a)): 15 is a change for each.
          await write(index, 15)
          lastAnswer = Math.max(lastAnswer, performance.now())
        }
      })
    )
    const received = () => arrivals.every((times, index) => times.length > (already[index] ?? 0))
    await wait("every stream receiving its user's event", received)
    const cpuAfter = cpuSecondsOf(server.pid)
    const arrivedAt = arrivals.map((times, index) => times[already[index] ?? 0] ?? Number.NaN)
    const lastEvent = Math.max(...arrivedAt)
    const latencies = arrivedAt.map((at, index) => at - (sentAt[index] ?? Number.NaN))
    const seconds = (lastEvent - firstSent) / 1000

    const result: StreamsResult = {
      streams,
      openSeconds,
      before,
      open,
      oneUser: {
        samples: ONE_USER_SAMPLES,
        p50Millis: percentile(oneUser, 50),
        maxMillis: Math.max(...oneUser)
      },
      perUser: {
        writes: streams,
        concurrency: CONCURRENCY,
        seconds,
        eventsPerSecond: streams / seconds,
        lastWriteToLastEventMillis: lastEvent - lastAnswer,
        p50Millis: percentile(latencies, 50),
        p99Millis: percentile(latencies, 99)
      },
      serverCpuMicrosPerEvent:
        cpuBefore === undefined || cpuAfter === undefined ? undefined : ((cpuAfter - cpuBefore) * 1e6) / streams
    }
    const message: ChildMessage = { type: "streams", result }
    process.send(message)
  } finally {
    stop.abort()
    await stopChild(server)
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error)
    process.exit(1)
  }
)
