import type { ServerResponse } from "node:http"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, Redacted, Schema } from "effect"
import { Webhook } from "standardwebhooks"
import { toEventEnvelope } from "@accord/contract"
import { EventStore, Seed, TimezoneOffset, updateLanguagePreferences, UserId, type RecordedEvent } from "@accord/domain"
import { makeMemoryStore } from "@accord/store-memory"
import { newSecret, ok, startReceiver, Waiters, type Receiver } from "./webhook-receiver.js"
import { parseWebhookSecrets } from "@accord/contract/webhook-secrets"
import {
  endpointOf,
  parseRetryAfter,
  signWebhook,
  startEventRelay,
  webhookSink,
  type RelaySettings
} from "../src/events.js"
import { createLogger, createMetrics, defaultConfig, parseConfig, startAccord } from "../src/index.js"
import { deliveryLogging } from "../src/throttled-log.js"
import { bearer, makeTempDir, testSeed, USER_TOKEN } from "./cli-helpers.js"

// docs/operations.md, "Events": the relay against a real receiver that verifies every signature with an independent
// implementation of Standard Webhooks (`standardwebhooks`), and the receiver's faults. Every wait is for a count of
// requests or refusals, never for a time; back-off and polling are made short so that retries come at once.

const USER = UserId.make("u_events")
const seed = Schema.decodeUnknownSync(Seed)({
  users: [{ id: USER, token: "events-token" }],
  payment_methods: [
    { id: "pm_1", user_id: USER, is_default: false },
    { id: "pm_2", user_id: USER, is_default: false }
  ]
})

/** A memory store holding `count` events of the user (timezone changes), and its runtime. */
const storeWithEvents = async (count: number) => {
  const runtime = ManagedRuntime.make(makeMemoryStore(seed))
  for (let index = 1; index <= count; index++)
    await runtime.runPromise(updateLanguagePreferences(USER, { timezone: TimezoneOffset.make(15 * index) }))
  const recorded = await runtime.runPromise(Effect.flatMap(EventStore, (events) => events.list(undefined, 1000)))
  expect(recorded).toHaveLength(count)
  return { runtime, recorded }
}

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** Starts a relay to `urls` with short waits, and what it reports of each refusal. */
const relay = async (
  runtime: ManagedRuntime.ManagedRuntime<EventStore, unknown>,
  urls: ReadonlyArray<string>,
  secrets: ReadonlyArray<string>,
  settings: Partial<RelaySettings> = {}
) => {
  const refusals: Array<string> = []
  const settled: Array<string> = []
  const waiters = new Waiters()
  const running = await startEventRelay(
    runtime,
    {
      webhookUrls: urls,
      webhookKeys: parseWebhookSecrets(secrets.join(" ")) ?? [],
      webhookConnectTimeoutMs: 5_000,
      webhookTimeoutMs: 5_000,
      natsUrl: undefined,
      retryForMs: 86_400_000,
      backoffMs: 1,
      pollMs: 5,
      retentionDays: 0,
      ...settings
    },
    {
      onSettled: (_event, _sink, settlement, failure) => {
        if (failure !== undefined) refusals.push(failure.reason)
        settled.push(settlement.status)
        waiters.changed()
      }
    }
  )
  if (running === undefined) throw new Error("no relay started")
  cleanups.push(running.close)
  return {
    refusals,
    refusalsUntil: (count: number) => waiters.until(() => refusals.length >= count),
    /** Once the store has `count` attempts' outcomes of `status`. */
    settledUntil: (status: string, count: number) =>
      waiters.until(() => settled.filter((each) => each === status).length >= count)
  }
}

const counts = (runtime: ManagedRuntime.ManagedRuntime<EventStore, unknown>) =>
  runtime.runPromise(Effect.flatMap(EventStore, (events) => events.countByStatus))

/** Each event received exactly once, with the store's envelope as its body. */
const expectEachOnce = (receiver: Receiver, recorded: ReadonlyArray<RecordedEvent>) => {
  expect(receiver.unverified).toEqual([])
  expect([...receiver.deliveries].map((delivery) => delivery.id).sort()).toEqual(
    recorded.map((event) => event.id).sort()
  )
  for (const event of recorded) {
    const delivery = receiver.deliveries.find((candidate) => candidate.id === event.id)
    expect(delivery?.body).toBe(JSON.stringify(toEventEnvelope(event)))
  }
}

describe("the event relay's webhooks", () => {
  it("delivers every event once, signed with every secret of a rotation, which standardwebhooks verifies", async () => {
    const secrets = [newSecret(), newSecret()]
    const { runtime, recorded } = await storeWithEvents(5)
    cleanups.push(() => runtime.dispose())
    const receiver = await startReceiver(secrets, ok)
    cleanups.push(receiver.close)
    const { settledUntil } = await relay(runtime, [receiver.url], secrets)
    await settledUntil("delivered", recorded.length)
    expectEachOnce(receiver, recorded)
    expect(await counts(runtime)).toEqual({ pending: 0, delivered: 5, failed: 0 })
    // An event recorded while the relay runs is delivered too.
    await runtime.runPromise(updateLanguagePreferences(USER, { mfaEnabled: true }))
    await receiver.until(() => receiver.deliveries.length === 6)
    expect(JSON.parse(receiver.deliveries[5]?.body ?? "{}")).toMatchObject({
      type: "preferences.updated",
      data: { changes: { mfa_enabled: { old: false, new: true } } }
    })
  })

  it("the receiver down, then back: every event delivered, none twice", async () => {
    const secrets = [newSecret()]
    const { runtime, recorded } = await storeWithEvents(3)
    cleanups.push(() => runtime.dispose())
    // A port nothing listens on, until the receiver comes up on it.
    const probe = await startReceiver(secrets, ok)
    await probe.close()
    const { refusals, refusalsUntil } = await relay(runtime, [`http://127.0.0.1:${probe.port}/hooks`], secrets)
    await refusalsUntil(6)
    expect(new Set(refusals)).toEqual(new Set(["ECONNREFUSED"]))
    expect((await counts(runtime)).pending).toBe(3)
    const receiver = await startReceiver(secrets, ok, probe.port)
    cleanups.push(receiver.close)
    await receiver.until(() => receiver.deliveries.length >= recorded.length)
    expectEachOnce(receiver, recorded)
  })

  it("a 500 is retried until a 2xx", async () => {
    const secrets = [newSecret()]
    const { runtime, recorded } = await storeWithEvents(2)
    cleanups.push(() => runtime.dispose())
    const receiver = await startReceiver(secrets, (_request, response, n) =>
      n < 4 ? response.writeHead(500).end("down") : response.writeHead(200).end()
    )
    cleanups.push(receiver.close)
    const { refusals } = await relay(runtime, [receiver.url], secrets)
    await receiver.until(() => receiver.deliveries.length >= recorded.length)
    expectEachOnce(receiver, recorded)
    expect(refusals).toEqual(["status 500", "status 500", "status 500", "status 500"])
  })

  it("an answer that does not come in time is a failed attempt; the event is sent again", async () => {
    const secrets = [newSecret()]
    const { runtime, recorded } = await storeWithEvents(1)
    cleanups.push(() => runtime.dispose())
    const hanging: Array<ServerResponse> = []
    const receiver = await startReceiver(secrets, (_request, response, n) => {
      if (n === 0) hanging.push(response)
      else response.writeHead(200).end()
    })
    cleanups.push(receiver.close)
    const { refusals } = await relay(runtime, [receiver.url], secrets, { webhookTimeoutMs: 50 })
    await receiver.until(() => receiver.deliveries.length >= 1)
    expectEachOnce(receiver, recorded)
    expect(refusals).toEqual(["no answer in time"])
    expect(hanging).toHaveLength(1)
  })

  it("a redirect is not followed: a failed attempt, and its target gets nothing", async () => {
    const secrets = [newSecret()]
    const { runtime, recorded } = await storeWithEvents(1)
    cleanups.push(() => runtime.dispose())
    const elsewhere = await startReceiver(secrets, ok)
    cleanups.push(elsewhere.close)
    const receiver = await startReceiver(secrets, (_request, response, n) =>
      n === 0 ? response.writeHead(307, { location: elsewhere.url }).end() : response.writeHead(200).end()
    )
    cleanups.push(receiver.close)
    const { refusals } = await relay(runtime, [receiver.url], secrets)
    await receiver.until(() => receiver.deliveries.length >= 1)
    expectEachOnce(receiver, recorded)
    expect(refusals).toEqual(["status 307"])
    expect(elsewhere.requests()).toBe(0)
  })

  it("of a large answer at most a few KiB are read: the relay drops the connection and the event is delivered", async () => {
    const secrets = [newSecret()]
    const { runtime, recorded } = await storeWithEvents(1)
    cleanups.push(() => runtime.dispose())
    let finished: boolean | undefined
    const closed = new Waiters()
    const receiver = await startReceiver(secrets, (_request, response) => {
      response.writeHead(200, { "content-type": "application/octet-stream" })
      response.on("close", () => {
        finished = response.writableFinished
        closed.changed()
      })
      // 64 MiB, written as fast as the relay reads: it never reads them all.
      const chunk = Buffer.alloc(65_536)
      let left = 1024
      const write = () => {
        while (left > 0) {
          left--
          if (!response.write(chunk)) return void response.once("drain", write)
        }
        response.end()
      }
      write()
    })
    cleanups.push(receiver.close)
    const { settledUntil } = await relay(runtime, [receiver.url], secrets)
    await settledUntil("delivered", 1)
    await closed.until(() => finished !== undefined)
    expectEachOnce(receiver, recorded)
    expect(finished).toBe(false)
    expect((await counts(runtime)).delivered).toBe(1)
  })

  it("past the retry time an event is marked failed and kept; replayed, it is delivered", async () => {
    const secrets = [newSecret()]
    const { runtime, recorded } = await storeWithEvents(2)
    cleanups.push(() => runtime.dispose())
    let accepting = false
    const receiver = await startReceiver(secrets, (_request, response) =>
      response.writeHead(accepting ? 200 : 503).end()
    )
    cleanups.push(receiver.close)
    // Retried for 1 ms: the first refusal is the last.
    const { settledUntil } = await relay(runtime, [receiver.url], secrets, { retryForMs: 1 })
    await settledUntil("failed", 2)
    expect(await counts(runtime)).toEqual({ pending: 0, delivered: 0, failed: 2 })
    accepting = true
    const replayed = await runtime.runPromise(Effect.flatMap(EventStore, (events) => events.replayFailed(new Date())))
    expect(replayed).toBe(2)
    await receiver.until(() => receiver.deliveries.length >= 2)
    expectEachOnce(receiver, recorded)
  })
})

describe("webhook answers (Standard Webhooks' status rules)", () => {
  it("Retry-After: delay-seconds or an HTTP-date, read up to a bound; anything else is no Retry-After", () => {
    const now = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT")
    expect(parseRetryAfter("2", now)).toBe(2000)
    expect(parseRetryAfter(" 120 ", now)).toBe(120_000)
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:30 GMT", now)).toBe(30_000)
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:27:00 GMT", now)).toBe(0)
    for (const refused of [
      undefined,
      "",
      "1.5",
      "-1",
      "soon",
      "2015-10-21T07:28:30Z",
      `${"9".repeat(11)}`,
      " ".repeat(65) + "1"
    ])
      expect(parseRetryAfter(refused, now)).toBeUndefined()
  })

  it("410 says the endpoint is gone; 429 and 503 with Retry-After say when to come back; other answers only fail", async () => {
    const secrets = [newSecret()]
    const answers: Array<[number, Record<string, string>]> = [
      [410, {}],
      [429, { "retry-after": "3" }],
      [503, { "retry-after": "7" }],
      [500, { "retry-after": "3" }],
      [429, {}],
      [503, { "retry-after": "later" }],
      [204, {}]
    ]
    const receiver = await startReceiver(secrets, (_request, response, n) => {
      const [status, headers] = answers[n] ?? [500, {}]
      response.writeHead(status, headers).end()
    })
    cleanups.push(receiver.close)
    const { recorded } = await storeWithEvents(1)
    const [event] = recorded
    if (event === undefined) throw new Error("no event")
    const sink = webhookSink({
      url: receiver.url,
      keys: parseWebhookSecrets(secrets[0] ?? "") ?? [],
      connectTimeoutMs: 1000,
      responseTimeoutMs: 1000
    })
    expect(sink.attemptTimeoutMillis).toBe(2000)
    const outcomes: Array<unknown> = []
    for (const _ of answers) {
      const result = await Effect.runPromise(Effect.result(sink.deliver(event)))
      outcomes.push(
        result._tag === "Success"
          ? "taken"
          : {
              reason: result.failure.reason,
              retryAfterMillis: result.failure.retryAfterMillis,
              gone: result.failure.gone
            }
      )
    }
    expect(outcomes).toEqual([
      { reason: "status 410", retryAfterMillis: undefined, gone: true },
      { reason: "status 429", retryAfterMillis: 3000, gone: undefined },
      { reason: "status 503", retryAfterMillis: 7000, gone: undefined },
      { reason: "status 500", retryAfterMillis: undefined, gone: undefined },
      { reason: "status 429", retryAfterMillis: undefined, gone: undefined },
      { reason: "status 503", retryAfterMillis: undefined, gone: undefined },
      "taken"
    ])
  })

  it("an endpoint is logged by its scheme, host and path: never its userinfo, query or fragment", () => {
    expect(endpointOf("https://user:pw@hooks.example.com:8443/in/accord?token=s3cret#x")).toBe(
      "https://hooks.example.com:8443/in/accord"
    )
  })
})

describe("deliveryLogging", () => {
  const capture = () => {
    const lines: Array<Record<string, unknown>> = []
    const logger = createLogger("info", { write: (line: string) => void lines.push(JSON.parse(line)) })
    return { lines, logger }
  }
  const refusal = (n: number) => ({ eventId: `e${n}`, type: "preferences.updated", reason: "status 500", attempts: n })

  it("a sink's refusals: the first at once, then at most one per interval with the count not logged; recovery once", () => {
    const { lines, logger } = capture()
    let now = 0
    const log = deliveryLogging(logger, 30_000, () => now)
    for (let n = 1; n <= 500; n++) {
      now = n * 100
      log.refused("webhook:a", refusal(n), false)
    }
    // 50 s of failures, one every 100 ms: a line at 0.1 s and at 30.1 s.
    expect(lines.map((line) => [line["msg"], line["eventId"], line["failuresNotLogged"]])).toEqual([
      ["event delivery failed; retrying", "e1", 0],
      ["event delivery failed; retrying", "e301", 299]
    ])
    log.refused("webhook:b", refusal(1), true)
    expect(lines.at(-1)).toMatchObject({ msg: "event delivery given up", sink: "webhook:b", failuresNotLogged: 0 })
    now = 60_000
    log.delivered("webhook:a")
    log.delivered("webhook:a")
    expect(lines.at(-1)).toMatchObject({
      msg: "event delivery recovered",
      sink: "webhook:a",
      failures: 500,
      failingForMs: 59_900
    })
    expect(lines).toHaveLength(4)
  })

  it("a sink that fails one attempt in two writes at most three lines per interval", () => {
    const { lines, logger } = capture()
    let now = 0
    const log = deliveryLogging(logger, 30_000, () => now)
    for (let n = 1; n <= 600; n++) {
      now = n * 100
      if (n % 2 === 0) log.delivered("webhook:a")
      else log.refused("webhook:a", refusal(n), false)
    }
    // 60 s: two intervals, each at most a failure line and a recovery line.
    expect(lines.length).toBeLessThanOrEqual(6)
    expect(lines.map((line) => line["msg"])).toEqual([
      "event delivery failed; retrying",
      "event delivery recovered",
      "event delivery failed; retrying",
      "event delivery recovered"
    ])
  })
})

describe("the server's relay when a loop dies", () => {
  it("logs it, shows it in the metrics, restarts it, and delivers every event", async () => {
    const secrets = [newSecret()]
    const receiver = await startReceiver(secrets, ok)
    cleanups.push(receiver.close)
    let claims = 0
    // As PGlite's refusal of an array parameter did (issue 35): the store's first claim is a defect.
    const dying = Layer.effect(
      EventStore,
      Effect.map(Effect.service(EventStore), (store) =>
        EventStore.of({
          ...store,
          claimDue: (...args) =>
            ++claims === 1
              ? Effect.die(new TypeError("a statement parameter of an unsupported type"))
              : store.claimDue(...args)
        })
      )
    )
    const runtime = ManagedRuntime.make(Layer.provideMerge(dying, makeMemoryStore(seed)))
    cleanups.push(() => runtime.dispose())
    for (const timezone of [15, 30, 45])
      await runtime.runPromise(updateLanguagePreferences(USER, { timezone: TimezoneOffset.make(timezone) }))
    const lines: Array<Record<string, unknown>> = []
    const logged = new Waiters()
    const metrics = createMetrics()
    const running = await startEventRelay(
      runtime,
      {
        webhookUrls: [receiver.url],
        webhookKeys: parseWebhookSecrets(secrets.join(" ")) ?? [],
        webhookConnectTimeoutMs: 1000,
        webhookTimeoutMs: 1000,
        natsUrl: undefined,
        retryForMs: 86_400_000,
        backoffMs: 1,
        pollMs: 5,
        retentionDays: 0
      },
      {
        metrics,
        logger: createLogger("info", {
          write: (line: string) => {
            lines.push(JSON.parse(line) as Record<string, unknown>)
            logged.changed()
          }
        })
      }
    )
    if (running === undefined) throw new Error("no relay started")
    cleanups.push(running.close)
    await logged.until(() => lines.some((line) => line["msg"] === "event relay stopped on a defect; restarting"))
    const scraped = await metrics.registry.metrics()
    expect(scraped).toMatch(/accord_event_relay_running\{sink="webhook:[0-9a-f]{16}"\} 0/)
    expect(scraped).toMatch(/accord_event_relay_restarts_total\{sink="webhook:[0-9a-f]{16}"\} 1/)
    await receiver.until(() => receiver.deliveries.length === 3)
    expect(lines.find((line) => line["msg"] === "event relay stopped on a defect; restarting")).toMatchObject({
      level: 50,
      error: "a statement parameter of an unsupported type",
      restartInMs: 1000
    })
    expect(lines.find((line) => line["msg"] === "event relay restarted")).toMatchObject({ restarts: 1 })
    expect(await metrics.registry.metrics()).toMatch(/accord_event_relay_running\{sink="webhook:[0-9a-f]{16}"\} 1/)
  })
})

describe("webhook signatures", () => {
  it("what signWebhook writes, standardwebhooks verifies; a changed body it refuses", () => {
    const secret = newSecret()
    const keys = parseWebhookSecrets(secret) ?? []
    const timestamp = Math.floor(Date.now() / 1000)
    const headers = {
      "webhook-id": "msg_1",
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signWebhook(keys, "msg_1", timestamp, '{"a":1}')
    }
    expect(new Webhook(secret).verify('{"a":1}', headers)).toEqual({ a: 1 })
    expect(() => new Webhook(secret).verify('{"a":2}', headers)).toThrow()
  })
})

describe("the server with --webhook-url", () => {
  it("sends a change made over HTTP to the receiver, lists it in the feed, counts it, and stays ready while a receiver is down", async () => {
    const temp = await makeTempDir()
    cleanups.push(temp.cleanup)
    const seedFile = await temp.write("seed.json", testSeed)
    const secret = newSecret()
    const receiver = await startReceiver([secret], ok)
    cleanups.push(receiver.close)
    const down = await startReceiver([secret], ok)
    await down.close()
    const lines: Array<string> = []
    const logged = new Waiters()
    const accord = await startAccord(
      {
        ...defaultConfig,
        port: 0,
        seedFile,
        scrypt: { N: 1024, r: 8, p: 1 },
        metrics: { host: "127.0.0.1", port: 0 },
        webhookUrl: [receiver.url, `http://127.0.0.1:${down.port}/hooks`],
        webhookSecret: Redacted.make(parseWebhookSecrets(secret) ?? []),
        eventsBackoffMs: 1,
        eventsPollMs: 5
      },
      {
        logger: createLogger("info", {
          write: (line: string) => {
            lines.push(line)
            logged.changed()
          }
        })
      }
    )
    cleanups.push(accord.close)
    const changed = await fetch(`${accord.url}/api/payments/v1/payment-methods/pm_2/`, {
      method: "PUT",
      headers: bearer(USER_TOKEN)
    })
    expect(changed.status).toBe(200)
    await receiver.until(() => receiver.deliveries.length >= 1)
    const feed = (await (
      await fetch(`${accord.url}/api/users/v1/events/`, { headers: bearer(USER_TOKEN) })
    ).json()) as {
      data: ReadonlyArray<{ id: string }>
    }
    expect(feed.data.map((event) => event.id)).toEqual(receiver.deliveries.map((delivery) => delivery.id))
    expect(JSON.parse(receiver.deliveries[0]?.body ?? "{}")).toMatchObject({
      type: "payment_method.default_changed",
      subject: "users/u_1",
      data: { payment_method_id: "pm_2", previous_default_id: "pm_1" }
    })
    // The other endpoint is down: the event stays pending for it, and the service is ready all the same.
    await logged.until(() => lines.some((line) => line.includes("event delivery failed; retrying")))
    expect((await fetch(`${accord.url}/api/health/ready`)).status).toBe(200)
    const metrics = await (await fetch(`${accord.metricsUrl ?? ""}/metrics`)).text()
    expect(metrics).toContain('accord_events{status="pending"} 1')
    expect(metrics).toMatch(/accord_event_deliveries_total\{sink="webhook:[0-9a-f]{16}",status="pending"\} [1-9]/)
    expect(metrics).toMatch(/accord_event_sink_deliveries\{sink="webhook:[0-9a-f]{16}",status="pending"\} 1/)
    // Each sink named once at start by its endpoint (scheme, host, path), then by its digest and the reason: never
    // the URL's query (its token), or the secret.
    const log = lines.join("")
    expect(log).toContain("event delivery failed; retrying")
    const named = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line["msg"] === "event sink")
    expect(named.map((line) => line["endpoint"])).toEqual([
      receiver.url.split("?")[0],
      `http://127.0.0.1:${down.port}/hooks`
    ])
    expect(named.map((line) => line["sink"])).toEqual([
      expect.stringMatching(/^webhook:[0-9a-f]{16}$/),
      expect.stringMatching(/^webhook:/)
    ])
    expect(log).not.toContain(receiver.url.split("?")[1] ?? "token=")
    expect(log).not.toContain(secret)
  })

  it("on the memory store, stopping with events not delivered logs how many (they are lost)", async () => {
    const temp = await makeTempDir()
    cleanups.push(temp.cleanup)
    const seedFile = await temp.write("seed.json", testSeed)
    const down = await startReceiver([newSecret()], ok)
    await down.close()
    const lines: Array<Record<string, unknown>> = []
    const logged = new Waiters()
    const accord = await startAccord(
      {
        ...defaultConfig,
        port: 0,
        seedFile,
        scrypt: { N: 1024, r: 8, p: 1 },
        webhookUrl: [`http://127.0.0.1:${down.port}/hooks`],
        webhookSecret: Redacted.make(parseWebhookSecrets(newSecret()) ?? []),
        eventsBackoffMs: 1,
        eventsPollMs: 5
      },
      {
        logger: createLogger("info", {
          write: (line: string) => {
            lines.push(JSON.parse(line) as Record<string, unknown>)
            logged.changed()
          }
        })
      }
    )
    for (const timezone of [15, 30, 45]) {
      const written = await fetch(`${accord.url}/api/users/v1/preferences/language/`, {
        method: "PUT",
        headers: { ...bearer(USER_TOKEN), "content-type": "application/json" },
        body: JSON.stringify({ timezone })
      })
      expect(written.status).toBe(200)
    }
    await logged.until(() => lines.some((line) => line["msg"] === "event delivery failed; retrying"))
    await accord.close()
    const messages = lines.map((line) => line["msg"])
    const warned = lines.find(
      (line) => line["msg"] === "the memory store stops with events not delivered; they are lost"
    )
    expect(warned).toMatchObject({ level: 40, pending: 3, failed: 0 })
    expect(messages.indexOf("the memory store stops with events not delivered; they are lost")).toBeLessThan(
      messages.indexOf("stopped")
    )
  })

  it("refuses --webhook-url without WEBHOOK_SECRET (exit 2)", () => {
    expect(() =>
      parseConfig(["--webhook-url", "http://127.0.0.1:1/a", "--webhook-url", "http://127.0.0.1:1/b"], {})
    ).toThrow(/--webhook-url \(WEBHOOK_URLS\) needs WEBHOOK_SECRET/)
    const parsed = parseConfig(["--webhook-url", "http://127.0.0.1:1/a", "--webhook-url", "http://127.0.0.1:1/b"], {
      WEBHOOK_SECRET: newSecret()
    })
    expect(parsed._tag === "Run" && parsed.config.webhookUrl).toEqual(["http://127.0.0.1:1/a", "http://127.0.0.1:1/b"])
  })
})
