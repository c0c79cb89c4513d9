import { fstatSync, write, writeSync } from "node:fs"
import type { DestinationStream } from "pino"

/** Log bytes held while stderr is slow; past it, new lines are dropped (and counted) rather than memory grown. */
export const MAX_BUFFERED_LOG_BYTES = 16 * 1024 * 1024

/** Lines are written once this many bytes wait (nginx's `access_log ... buffer=`)... */
export const LOG_BUFFER_BYTES = 64 * 1024

/** ...or once the first of them has waited this long (nginx's `flush=`). docs/operations.md, "Logs". */
export const LOG_FLUSH_INTERVAL_MS = 200

/** A write stderr cannot take yet (EAGAIN: a full non-blocking pipe) is tried again after this long. */
const RETRY_WRITE_AFTER_MS = 100

/** Linux's PIPE_BUF: a write to a pipe of at most this many bytes is never interleaved with another writer's. */
const PIPE_BUF = 4096

/** Logs whose lines an exit the flush did not see (`process.exit` elsewhere) still writes when it can. */
const openLogs = new Set<BufferedLog>()
let exitHookInstalled = false

/**
 * JSON lines on a file descriptor (stderr), batched: a line waits until LOG_BUFFER_BYTES are pending or for
 * `flushIntervalMs` (LOG_FLUSH_INTERVAL_MS), then the batch goes out in one asynchronous write (libuv's thread pool),
 * so a request costs neither a system call nor a thread pool round trip (one write per line was most of the 25 us a
 * request line cost). One write is in flight at a time; while stderr is slow, batches queue, up to
 * MAX_BUFFERED_LOG_BYTES in all, and lines past that are dropped and reported (`onDropped`) once stderr has taken the
 * queue. A write that fails (EPIPE: nobody reads stderr any more) loses its batch and never blocks.
 *
 * `maxWrite`: at most this many bytes a write, whole lines only (the processes of a cluster share one stderr); a
 * single longer line is written alone. Not sonic-boom (pino's destination): it measures all its pending text again
 * for every line it buffers, and its synchronous flush retries a failed write for ever.
 */
export class BufferedLog implements DestinationStream {
  /** Called, through the event loop, with the count of lines dropped since the last call, once stderr caught up. */
  onDropped: ((lines: number) => void) | undefined
  readonly #fd: number
  readonly #maxWrite: number
  readonly #flushIntervalMs: number
  #lines: Array<string> = []
  #lineBytes: Array<number> = []
  #pendingBytes = 0
  #timer: NodeJS.Timeout | undefined
  /** Batches handed to the file descriptor, in order; while `#writing`, the first is being written. */
  #batches: Array<Buffer> = []
  #batchBytes = 0
  #writing = false
  #dropped = 0
  #drained: Array<() => void> = []

  constructor(fd: number, options: { readonly maxWrite?: number; readonly flushIntervalMs?: number } = {}) {
    this.#fd = fd
    this.#maxWrite = options.maxWrite ?? Number.POSITIVE_INFINITY
    this.#flushIntervalMs = options.flushIntervalMs ?? LOG_FLUSH_INTERVAL_MS
    openLogs.add(this)
    if (!exitHookInstalled) {
      exitHookInstalled = true
      process.on("exit", () => {
        for (const log of openLogs) log.#writeAtExit()
      })
    }
  }

  write(line: string): void {
    const bytes = Buffer.byteLength(line)
    if (this.#pendingBytes + this.#batchBytes + bytes > MAX_BUFFERED_LOG_BYTES) {
      this.#dropped += 1
      return
    }
    this.#lines.push(line)
    this.#lineBytes.push(bytes)
    this.#pendingBytes += bytes
    if (this.#pendingBytes >= LOG_BUFFER_BYTES) this.#handOver()
    else this.#timer ??= setTimeout(this.#handOver, this.#flushIntervalMs).unref()
  }

  /** Writes what is pending; `callback` once stderr has taken everything (or refused it). pino's `logger.flush`. */
  flush(callback: () => void = () => undefined): void {
    this.#handOver()
    if (this.#writing) this.#drained.push(callback)
    else callback()
  }

  /** Starts writing the pending lines. */
  readonly #handOver = (): void => {
    this.#batchPending()
    if (!this.#writing) this.#writeNext()
  }

  /** The pending lines, as batches of whole lines of at most `#maxWrite` bytes each, joined to the queue. */
  #batchPending(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    const lines = this.#lines
    if (lines.length === 0) return
    const sizes = this.#lineBytes
    this.#lines = []
    this.#lineBytes = []
    this.#pendingBytes = 0
    let first = 0
    let bytes = 0
    for (let index = 0; index < lines.length; index++) {
      const size = sizes[index] ?? 0
      if (index > first && bytes + size > this.#maxWrite) {
        this.#enqueue(lines.slice(first, index).join(""))
        first = index
        bytes = 0
      }
      bytes += size
    }
    this.#enqueue(first === 0 ? lines.join("") : lines.slice(first).join(""))
  }

  #enqueue(text: string): void {
    const batch = Buffer.from(text)
    this.#batches.push(batch)
    this.#batchBytes += batch.length
  }

  readonly #writeNext = (): void => {
    const batch = this.#batches[0]
    if (batch === undefined) {
      this.#writing = false
      this.#whenDrained()
      return
    }
    this.#writing = true
    write(this.#fd, batch, 0, batch.length, null, this.#written)
  }

  readonly #written = (error: NodeJS.ErrnoException | null, written: number): void => {
    if (error?.code === "EAGAIN") {
      setTimeout(this.#writeNext, RETRY_WRITE_AFTER_MS).unref()
      return
    }
    const batch = this.#batches[0]
    if (batch !== undefined) {
      // A failed write loses its batch; a partial one (a full pipe, outside a cluster) goes on from where it stopped.
      const done = error !== null ? batch.length : written
      this.#batchBytes -= done
      if (done < batch.length) this.#batches[0] = batch.subarray(done)
      else this.#batches.shift()
    }
    this.#writeNext()
  }

  #whenDrained(): void {
    const callbacks = this.#drained
    this.#drained = []
    for (const callback of callbacks) callback()
    if (this.#dropped > 0 && this.onDropped !== undefined) {
      const dropped = this.#dropped
      this.#dropped = 0
      this.onDropped(dropped)
    }
  }

  /**
   * At an exit no flush preceded (`process.exit` outside cli.ts: e.g. a cluster worker whose primary died), what is
   * still pending is written synchronously, only to a regular file and only when no write is in flight: a pipe or a
   * terminal may block a synchronous write for ever (a reader that stopped reading), and a process must always exit.
   */
  #writeAtExit(): void {
    if (this.#writing) return
    this.#batchPending()
    if (this.#batches.length === 0) return
    try {
      if (!fstatSync(this.#fd).isFile()) return
      for (const batch of this.#batches.splice(0)) writeSync(this.#fd, batch)
    } catch {
      // Nothing more can be done for these lines.
    }
  }
}

/** stderr, batched (BufferedLog); `flushLogger` empties it before the process exits. */
export const stderrDestination = (): DestinationStream => new BufferedLog(2)

/**
 * stderr for a process of a cluster, whose processes all write to the one stderr: each write carries whole lines and
 * at most PIPE_BUF bytes, so that lines of two processes never mix; a single line longer than that (a stack trace) is
 * written alone, and a pipe may then interleave it with another process's line.
 */
export const sharedStderr = (): DestinationStream => new BufferedLog(2, { maxWrite: PIPE_BUF })
