// A Server-Sent Events parser, as WHATWG HTML's "event stream interpretation" reads a stream (section 9.2.6): UTF-8
// decoded (invalid bytes as U+FFFD), one leading BOM ignored, lines ended by CRLF, LF or CR, `:` comments, a field
// without a colon taken whole with an empty value, one space after the colon dropped, `retry` of ASCII digits only,
// an `id` holding NULL ignored, `data` lines joined with LF, an event dispatched by an empty line and an unfinished one
// discarded at the end. Plain code, no Node API: the events-stream entry reads a `fetch` body with it.

/** One event as dispatched: its type (`message` when no `event` field named one), data and last event id. */
export interface ServerSentEvent {
  readonly type: string
  readonly data: string
  readonly lastEventId: string
}

/** What a piece of the stream gave, in the order the stream gave it. */
export type EventStreamItem =
  /** An event with data (the EventSource API's `message` event and its peers). */
  | { readonly kind: "event"; readonly event: ServerSentEvent }
  /** An empty line that dispatched no event (no data): the last event id may still have been set by it. */
  | { readonly kind: "empty"; readonly lastEventId: string }
  /** A `retry` field of digits: the reconnection time, in milliseconds. */
  | { readonly kind: "retry"; readonly milliseconds: number }
  /** A comment line (`:` first), its text after the colon: a heartbeat, usually. */
  | { readonly kind: "comment"; readonly text: string }

/** A line or an event's data longer than the parser's bound: the stream cannot be read on. */
export class EventStreamTooLarge extends Error {
  override readonly name = "EventStreamTooLarge"
  readonly limit: number
  constructor(limit: number) {
    super(`A line or an event of the stream is longer than ${limit} characters.`)
    this.limit = limit
  }
}

/** Default bound of a line and of an event's data, in UTF-16 code units: far above any event of Accord's. */
export const DEFAULT_MAX_EVENT_LENGTH = 1_048_576

const LINE_END = /[\r\n]/g
const DIGITS = /^[0-9]+$/

/**
 * Reads an event stream piece by piece: `push` bytes (or `pushText` text already decoded) as they arrive and get what
 * they complete; `end()` when the stream ends (an unfinished line or event is discarded, as the specification says).
 * Holds at most `maxEventLength` characters of a line and of an event's data (default 1 MiB), so a server that never
 * ends a line cannot make it grow without bound; beyond it `push` throws `EventStreamTooLarge`.
 */
export class EventStreamParser {
  readonly #maxLength: number
  // ignoreBOM: the BOM is dropped below, once, whether the stream came as bytes or as text.
  readonly #decoder = new TextDecoder("utf-8", { ignoreBOM: true })
  #started = false
  /** The previous piece ended with CR: an LF first in the next one ends no other line. */
  #afterCR = false
  #line = ""
  #data = ""
  #type = ""
  #lastEventId = ""

  constructor(options: { readonly maxEventLength?: number } = {}) {
    this.#maxLength = options.maxEventLength ?? DEFAULT_MAX_EVENT_LENGTH
  }

  /** The last event ID buffer: what the last `id` field set (reset only by an `id` field with an empty value). */
  get lastEventId(): string {
    return this.#lastEventId
  }

  push(bytes: Uint8Array): ReadonlyArray<EventStreamItem> {
    return this.pushText(this.#decoder.decode(bytes, { stream: true }))
  }

  pushText(text: string): ReadonlyArray<EventStreamItem> {
    const items: Array<EventStreamItem> = []
    if (text.length === 0) return items
    let start = 0
    if (!this.#started) {
      this.#started = true
      if (text.charCodeAt(0) === 0xfeff) start = 1
    }
    if (this.#afterCR) {
      this.#afterCR = false
      if (text.charCodeAt(start) === 0x0a) start += 1
    }
    LINE_END.lastIndex = start
    for (let match = LINE_END.exec(text); match !== null; match = LINE_END.exec(text)) {
      const end = match.index
      const line = this.#line + text.slice(start, end)
      this.#line = ""
      if (line.length > this.#maxLength) throw new EventStreamTooLarge(this.#maxLength)
      this.#interpret(line, items)
      start = end + 1
      if (text.charCodeAt(end) === 0x0d) {
        if (end + 1 === text.length) this.#afterCR = true
        else if (text.charCodeAt(end + 1) === 0x0a) start += 1
      }
      LINE_END.lastIndex = start
    }
    if (start < text.length) {
      if (this.#line.length + text.length - start > this.#maxLength) throw new EventStreamTooLarge(this.#maxLength)
      this.#line += text.slice(start)
    }
    return items
  }

  /** The stream ended: bytes of an unfinished character count as one U+FFFD; an unfinished line or event is dropped. */
  end(): ReadonlyArray<EventStreamItem> {
    const items = this.pushText(this.#decoder.decode())
    this.#line = ""
    this.#data = ""
    this.#type = ""
    return items
  }

  #interpret(line: string, items: Array<EventStreamItem>): void {
    if (line.length === 0) return this.#dispatch(items)
    const colon = line.indexOf(":")
    if (colon === 0) {
      items.push({ kind: "comment", text: line.slice(1) })
      return
    }
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? "" : line.slice(colon + 1)
    if (value.charCodeAt(0) === 0x20) value = value.slice(1)
    switch (field) {
      case "event":
        this.#type = value
        return
      case "data":
        if (this.#data.length + value.length + 1 > this.#maxLength) throw new EventStreamTooLarge(this.#maxLength)
        this.#data += `${value}\n`
        return
      case "id":
        if (!value.includes("\0")) this.#lastEventId = value
        return
      case "retry":
        if (DIGITS.test(value)) items.push({ kind: "retry", milliseconds: Number(value) })
        return
      default:
        // Any other field is ignored.
        return
    }
  }

  #dispatch(items: Array<EventStreamItem>): void {
    const data = this.#data
    const type = this.#type
    this.#data = ""
    this.#type = ""
    if (data.length === 0) {
      items.push({ kind: "empty", lastEventId: this.#lastEventId })
      return
    }
    // The data buffer's last LF, added after its last line, is not part of the data.
    items.push({
      kind: "event",
      event: { type: type.length === 0 ? "message" : type, data: data.slice(0, -1), lastEventId: this.#lastEventId }
    })
  }
}
