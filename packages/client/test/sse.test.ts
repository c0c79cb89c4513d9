import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { EventStreamParser, EventStreamTooLarge, type EventStreamItem } from "@accord/client/events-stream"

// The parser against WHATWG HTML's "event stream interpretation" (9.2.6): its own examples, its edge cases, and any
// split of the bytes into pieces giving the same items as the whole.

const encoder = new TextEncoder()

/** Every item of `text` read in one piece, then the end. */
const parse = (text: string | Uint8Array, options?: { readonly maxEventLength?: number }) => {
  const parser = new EventStreamParser(options)
  const bytes = typeof text === "string" ? encoder.encode(text) : text
  return [...parser.push(bytes), ...parser.end()]
}

/** Only the events: type, data and last event id. */
const events = (text: string | Uint8Array) => parse(text).flatMap((item) => (item.kind === "event" ? [item.event] : []))

const message = (data: string, lastEventId = "") => ({ type: "message", data, lastEventId })

describe("EventStreamParser: the specification's examples", () => {
  it("joins data lines with LF", () => {
    expect(events("data: YHOO\ndata: +2\ndata: 10\n\n")).toEqual([message("YHOO\n+2\n10")])
  })

  it("reads comments, ids and an id field with no value, which resets the last event id", () => {
    const text = ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
    expect(parse(text)).toEqual([
      { kind: "comment", text: " test stream" },
      { kind: "empty", lastEventId: "" },
      { kind: "event", event: message("first event", "1") },
      { kind: "event", event: message("second event", "") },
      { kind: "event", event: message(" third event", "") }
    ])
  })

  it("dispatches an empty data, a single LF, and discards a block not followed by an empty line", () => {
    expect(events("data\n\ndata\ndata\n\ndata:")).toEqual([message(""), message("\n")])
  })

  it("drops one space after the colon, not more", () => {
    expect(events("data:test\n\ndata: test\n\n")).toEqual([message("test"), message("test")])
  })
})

describe("EventStreamParser: edge cases", () => {
  it("ignores one leading BOM, not a second, and not one later", () => {
    expect(events("\uFEFFdata: a\n\n")).toEqual([message("a")])
    // A second BOM is part of the first field's name: an unknown field, ignored.
    expect(events("\uFEFF\uFEFFdata: a\n\ndata: b\n\n")).toEqual([message("b")])
    expect(events("data: a\n\n\uFEFFdata: b\n\n")).toEqual([message("a")])
  })

  it("ends lines with CRLF, LF and CR alike, a CRLF split between pieces once", () => {
    expect(events("data: a\r\ndata: b\rdata: c\n\r\n")).toEqual([message("a\nb\nc")])
    const parser = new EventStreamParser()
    expect([...parser.pushText("data: a\r"), ...parser.pushText("\ndata: b\r"), ...parser.pushText("\r")]).toEqual([
      { kind: "event", event: message("a\nb") }
    ])
    // CR LF LF: one line end, then an empty line.
    expect(events("data: a\r\n\n")).toEqual([message("a")])
    // CR CR: two line ends, the second an empty line.
    expect(events("data: a\r\r")).toEqual([message("a")])
  })

  it("takes a field without a colon whole, with an empty value", () => {
    expect(events("data\ndata\n\n")).toEqual([message("\n")])
    expect(parse("retry\n\n")).toEqual([{ kind: "empty", lastEventId: "" }])
  })

  it("sets the reconnection time from ASCII digits only", () => {
    const retries = (text: string) => parse(text).flatMap((item) => (item.kind === "retry" ? [item.milliseconds] : []))
    expect(retries("retry: 2000\n\n")).toEqual([2000])
    expect(retries("retry:0\n")).toEqual([0])
    for (const bad of ["retry: 10a\n", "retry:  1000\n", "retry: -1\n", "retry: 1.5\n", "retry: \n", "retry: １\n"])
      expect(retries(bad), bad).toEqual([])
  })

  it("ignores an id holding NULL, keeps the last id across events and sets it without data", () => {
    expect(events("id: 1\ndata: a\n\nid: 2\u00003\ndata: b\n\ndata: c\n\n")).toEqual([
      message("a", "1"),
      message("b", "1"),
      message("c", "1")
    ])
    expect(parse("id: 7\n\n")).toEqual([{ kind: "empty", lastEventId: "7" }])
    expect(events("id: 7\n\ndata: a\n\n")).toEqual([message("a", "7")])
  })

  it("names an event's type, then goes back to message", () => {
    expect(events("event: add\ndata: 1\n\ndata: 2\n\nevent: x\n\ndata: 3\n\n")).toEqual([
      { type: "add", data: "1", lastEventId: "" },
      message("2"),
      message("3")
    ])
  })

  it("ignores unknown fields, field names in another case, and fields with a space before the colon", () => {
    expect(events("foo: bar\nData: x\ndata : y\nDATA: z\ndata: kept\n\n")).toEqual([message("kept")])
  })

  it("keeps colons after the first in the value", () => {
    expect(events('data: {"a":"b:c"}\n\n')).toEqual([message('{"a":"b:c"}')])
  })

  it("discards an unfinished line and event at the end, and an unfinished character is U+FFFD", () => {
    expect(events("data: a\n\ndata: b\n")).toEqual([message("a")])
    expect(events("data: a\n\nid: 5")).toEqual([message("a")])
    const bytes = encoder.encode("data: é\n\n")
    expect(events(bytes.slice(0, 7))).toEqual([])
    const invalid = new Uint8Array([...encoder.encode("data: "), 0xff, ...encoder.encode("\n\n")])
    expect(events(invalid)).toEqual([message("\uFFFD")])
  })

  it("reads multi-byte characters split between pieces", () => {
    const bytes = encoder.encode("data: é€😀\n\n")
    const parser = new EventStreamParser()
    const items = [...bytes].flatMap((byte) => parser.push(new Uint8Array([byte])))
    expect(items).toEqual([{ kind: "event", event: message("é€😀") }])
  })

  it("refuses a line or an event longer than its bound, even one that never ends", () => {
    expect(() => parse(`data: ${"x".repeat(100)}\n\n`, { maxEventLength: 64 })).toThrow(EventStreamTooLarge)
    const parser = new EventStreamParser({ maxEventLength: 64 })
    expect(() => {
      for (let piece = 0; piece < 10; piece++) parser.pushText("x".repeat(10))
    }).toThrow(EventStreamTooLarge)
    // Many short data lines: the data is bounded, not only each line.
    expect(() => parse(`${"data: 0123456789\n".repeat(10)}\n`, { maxEventLength: 64 })).toThrow(EventStreamTooLarge)
    expect(parse(`data: ${"x".repeat(50)}\n\n`, { maxEventLength: 64 })).toHaveLength(1)
  })
})

/** A stream as a server may write it: events, comments and retry fields, each line ended one of the three ways. */
const streamText = fc
  .tuple(
    fc.boolean(),
    fc.array(
      fc.oneof(
        fc.record({
          id: fc.option(fc.stringMatching(/^[0-9a-f-]{0,12}$/), { nil: undefined }),
          event: fc.option(fc.constantFrom("add", "remove"), { nil: undefined }),
          data: fc.array(
            fc.string({ unit: "grapheme", maxLength: 12 }).map((s) => s.replace(/[\r\n]/g, "")),
            {
              maxLength: 3
            }
          )
        }),
        fc.string({ maxLength: 10 }).map((text) => ({ comment: text.replace(/[\r\n]/g, "") })),
        fc.nat({ max: 100_000 }).map((retry) => ({ retry }))
      ),
      { maxLength: 8 }
    ),
    fc.array(fc.constantFrom("\n", "\r", "\r\n"), { minLength: 1, maxLength: 4 })
  )
  .map(([bom, blocks, ends]) => {
    let index = 0
    const end = () => ends[index++ % ends.length] ?? "\n"
    let text = bom ? "\uFEFF" : ""
    for (const block of blocks) {
      if ("comment" in block) text += `:${block.comment}${end()}`
      else if ("retry" in block) text += `retry: ${block.retry}${end()}`
      else {
        if (block.id !== undefined) text += `id: ${block.id}${end()}`
        if (block.event !== undefined) text += `event: ${block.event}${end()}`
        for (const line of block.data) text += `data: ${line}${end()}`
        text += end()
      }
    }
    return text
  })

/** Cut points in `length` bytes: any of them, in order, none twice. */
const cutsIn = (length: number) =>
  fc
    .uniqueArray(fc.integer({ min: 1, max: Math.max(1, length - 1) }), { maxLength: 12 })
    .map((cuts) => cuts.filter((cut) => cut < length).sort((a, b) => a - b))

const inPieces = (bytes: Uint8Array, cuts: ReadonlyArray<number>): ReadonlyArray<EventStreamItem> => {
  const parser = new EventStreamParser()
  const items: Array<EventStreamItem> = []
  let from = 0
  for (const cut of [...cuts, bytes.length]) {
    items.push(...parser.push(bytes.slice(from, cut)))
    from = cut
  }
  return [...items, ...parser.end()]
}

describe("EventStreamParser: any split of the bytes", () => {
  it("gives the items of the whole stream read at once", () => {
    fc.assert(
      fc.property(
        streamText.chain((text) => {
          const bytes = encoder.encode(text)
          return fc.tuple(fc.constant(bytes), cutsIn(bytes.length))
        }),
        ([bytes, cuts]) => {
          expect(inPieces(bytes, cuts)).toEqual(parse(bytes))
        }
      ),
      { numRuns: 500 }
    )
  })

  it("gives back the data a server wrote, line by line, whatever the line ends", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.array(
            fc.string({ unit: "grapheme", maxLength: 8 }).map((s) => s.replace(/[\r\n]/g, "")),
            {
              minLength: 1,
              maxLength: 3
            }
          ),
          { maxLength: 5 }
        ),
        fc.constantFrom("\n", "\r", "\r\n"),
        (datas, end) => {
          const text = datas.map((lines) => lines.map((line) => `data: ${line}${end}`).join("") + end).join("")
          expect(events(text).map((event) => event.data)).toEqual(datas.map((lines) => lines.join("\n")))
        }
      ),
      { numRuns: 300 }
    )
  })
})
