import { equal, fail, isTrue } from "./assert.js"
import { audit, type Audit, type AuditTarget } from "./audit.js"
import {
  bearer,
  expectJsonSuccess,
  expectPaymentMethodList,
  expectProblem,
  getPreferences,
  isRecord,
  listPaymentMethods,
  putPreferences,
  record,
  setDefault,
  str,
  text
} from "./responses.js"
import { TIMESTAMP_PATTERN } from "../paths.js"

// docs/api.md, "Events": the feed of the caller's own events, oldest first, paged by `after` and `limit`.

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
/** A well-formed UUIDv7 no server made: a cursor that names no event. */
const NO_EVENT = "00000000-0000-7000-8000-000000000000"

interface FeedEvent {
  readonly id: string
  readonly type: string
  readonly subject: string
  readonly sequence: number
  readonly data: unknown
}

const getEvents = (t: AuditTarget, token: string, query = "") =>
  t.send({ method: "GET", path: `${t.paths.events}${query}`, headers: bearer(token) })

/** A page of the feed: each item a CloudEvents 1.0 envelope of the contract's, and `has_more`. */
const expectPage = (
  label: string,
  res: Awaited<ReturnType<AuditTarget["send"]>>
): { readonly data: ReadonlyArray<FeedEvent>; readonly hasMore: boolean } => {
  const body = record(label, expectJsonSuccess(label, res, 200))
  equal(Object.keys(body), ["data", "has_more"], `${label}: keys`)
  if (typeof body["has_more"] !== "boolean") return fail(`${label}: has_more is not a boolean`)
  const items = body["data"]
  if (!Array.isArray(items)) return fail(`${label}: data is not an array`)
  const data = items.map((item: unknown, index): FeedEvent => {
    const at = `${label}: data[${index}]`
    const event = record(at, item)
    equal(
      Object.keys(event),
      ["specversion", "id", "source", "type", "time", "subject", "sequence", "datacontenttype", "data"],
      `${at} keys`
    )
    equal(event["specversion"], "1.0", `${at}.specversion`)
    isTrue(UUID_V7.test(str(`${at}.id`, event["id"])), `${at}.id is a UUIDv7`)
    isTrue(TIMESTAMP_PATTERN.test(str(`${at}.time`, event["time"])), `${at}.time is a timestamp`)
    equal(event["datacontenttype"], "application/json", `${at}.datacontenttype`)
    const sequence = event["sequence"]
    if (typeof sequence !== "number" || !Number.isInteger(sequence) || sequence < 1)
      return fail(`${at}.sequence is not a positive integer`)
    if (!isRecord(event["data"])) return fail(`${at}.data is not an object`)
    return {
      id: str(`${at}.id`, event["id"]),
      type: str(`${at}.type`, event["type"]),
      subject: str(`${at}.subject`, event["subject"]),
      sequence,
      data: event["data"]
    }
  })
  return { data, hasMore: body["has_more"] }
}

/** Every event of the user's feed, page by page (100 a page), and the last page's answer. */
const readFeed = async (t: AuditTarget, token: string, label: string): Promise<ReadonlyArray<FeedEvent>> => {
  const events: Array<FeedEvent> = []
  for (let pages = 0; pages < 1000; pages++) {
    const last = events.at(-1)
    const page = expectPage(
      `${label} page ${pages + 1}`,
      await getEvents(t, token, last === undefined ? "?limit=100" : `?limit=100&after=${last.id}`)
    )
    events.push(...page.data)
    if (!page.hasMore) return events
  }
  return fail(`${label}: more than 1000 pages`)
}

export const eventAudits: ReadonlyArray<Audit> = [
  audit({
    id: "ACC-events-record-changes",
    level: "MUST",
    title:
      "a change records its event at the end of the caller's feed (old and new values, previous default); a no-op records none; the other user's feed does not show it",
    operations: ["listEvents", "updateLanguagePreferences", "setDefaultPaymentMethod"],
    run: async (t) => {
      const user = t.userToken
      const before = await readFeed(t, user, "feed before")
      const current = record(
        "GET preferences",
        expectJsonSuccess("GET preferences", await getPreferences(t, user), 200)
      )
      const timezone = current["timezone"] === 60 ? 120 : 60
      await putPreferences(t, user, JSON.stringify({ timezone }))
      await putPreferences(t, user, JSON.stringify({ timezone }))
      const list = expectPaymentMethodList("GET list", await listPaymentMethods(t, user))
      const previous = list.find((method) => method.is_default)?.id ?? null
      const chosen = t.userPaymentMethods.find((id) => id !== previous) ?? ""
      await setDefault(t, user, chosen)
      await setDefault(t, user, chosen)
      const last = before.at(-1)
      const after = expectPage(
        "feed after the changes",
        await getEvents(t, user, last === undefined ? "" : `?after=${last.id}`)
      )
      equal(
        after.data.map((event) => [event.type, event.data]),
        [
          ["preferences.updated", { changes: { timezone: { old: current["timezone"], new: timezone } } }],
          ["payment_method.default_changed", { payment_method_id: chosen, previous_default_id: previous }]
        ],
        "feed after the changes: one event per change, none per no-op, oldest first"
      )
      const [first, second] = after.data
      equal(second?.subject, first?.subject, "both events have the user's subject")
      equal(second?.sequence, (first?.sequence ?? 0) + 1, "the subject's sequence goes up by one")
      if (last !== undefined) equal(first?.sequence, last.sequence + 1, "the sequence continues the feed's")
      const others = await readFeed(t, t.otherUserToken, "other user's feed")
      const mine = new Set(after.data.map((event) => event.id))
      isTrue(!others.some((event) => mine.has(event.id)), "the other user's feed has none of these events")
    }
  }),

  audit({
    id: "ACC-events-pages",
    level: "MUST",
    title:
      "pages: limit bounds a page, has_more says whether the next one has events, after continues from an id (its hex digits in either case)",
    operations: ["listEvents"],
    run: async (t) => {
      const user = t.userToken
      // Two changes, so that the feed holds at least two events.
      for (const timezone of [15, 30]) await putPreferences(t, user, JSON.stringify({ timezone }))
      const all = await readFeed(t, user, "whole feed")
      isTrue(all.length >= 2, `the feed holds at least two events, got ${all.length}`)
      const [first, second] = all
      const one = expectPage("?limit=1", await getEvents(t, user, "?limit=1"))
      equal(
        one.data.map((event) => event.id),
        [first?.id],
        "?limit=1: the first event"
      )
      equal(one.hasMore, true, "?limit=1: has_more")
      const nextAnswer = await getEvents(t, user, `?after=${first?.id ?? ""}&limit=1`)
      const next = expectPage("after the first", nextAnswer)
      equal(
        next.data.map((event) => event.id),
        [second?.id],
        "after the first: the second"
      )
      // An id is a UUID, whose hex digits name it in either case (RFC 9562): the same page, on every store.
      const upper = await getEvents(t, user, `?after=${(first?.id ?? "").toUpperCase()}&limit=1`)
      expectPage("after the first, in upper case", upper)
      equal(text(upper), text(nextAnswer), "after the first in upper case: the same page, byte for byte")
      const end = expectPage("after the last", await getEvents(t, user, `?after=${all.at(-1)?.id ?? ""}`))
      equal(end.data, [], "after the last: no event")
      equal(end.hasMore, false, "after the last: has_more false")
    }
  }),

  audit({
    id: "ACC-events-refusals",
    level: "MUST",
    title:
      "an unlisted, repeated or out-of-bounds query parameter is 400 invalid_query; a cursor that is not the caller's event is 400 invalid_cursor",
    operations: ["listEvents"],
    run: async (t) => {
      const user = t.userToken
      for (const query of [
        "?limit=0",
        "?limit=101",
        "?limit=01",
        "?limit=1.0",
        "?limit=ten",
        "?limit=",
        "?limit=1&limit=2",
        "?page=2",
        "?after=not-an-id",
        `?after=${NO_EVENT.replace("7000", "4000")}`
      ])
        expectProblem(`GET events${query}`, await getEvents(t, user, query), { code: "invalid_query" })
      expectProblem("a cursor that names no event", await getEvents(t, user, `?after=${NO_EVENT}`), {
        code: "invalid_cursor"
      })
      // The other user's own event is no cursor of this user's.
      await putPreferences(t, t.otherUserToken, JSON.stringify({ timezone: 45 }))
      await putPreferences(t, t.otherUserToken, JSON.stringify({ timezone: 0 }))
      const theirs = (await readFeed(t, t.otherUserToken, "other user's feed")).at(-1)
      if (theirs === undefined) return fail("the other user's feed is empty after two changes")
      expectProblem("another user's event as cursor", await getEvents(t, user, `?after=${theirs.id}`), {
        code: "invalid_cursor"
      })
      equal(text(await getEvents(t, user, "?")), text(await getEvents(t, user)), "an empty query is no query")
    }
  })
]
