import { spawn, spawnSync, type ChildProcess } from "node:child_process"
import { connect } from "node:net"
import { availableParallelism, setPriority } from "node:os"
import { forkChild, messageOf, stopChild } from "./processes.js"

/**
 * The machine's mode. On this project's 2-core virtual machine a client and a server trading small messages over
 * loopback run about four times slower per request when the machine is otherwise idle than when something keeps its
 * CPUs busy (an idle virtual CPU halts, and waking it costs more than the work), while a counting loop runs at the
 * same speed either way (remaining-costs.md). So the bench measures both: a loopback round trip between two
 * processes, as found and with a busy-loop on every core, and a counting loop; and it can run its servers with that
 * busy-loop on (`--machine-mode busy|both`).
 */

export type MachineMode = "idle" | "busy"

/** The busy-loop: one process per core that only ever gets a CPU nobody else wants. */
export interface BusyLoop {
  readonly stop: () => Promise<void>
}

const SPIN = "for (;;) {}"

/**
 * SCHED_IDLE (`chrt --idle 0`) runs a process only on a CPU that would otherwise idle, so the benchmarked processes
 * lose next to nothing to it; where chrt is missing, nice 19 is the closest.
 */
const hasChrt = (): boolean => spawnSync("chrt", ["--idle", "0", "true"], { stdio: "ignore" }).status === 0

export const startBusyLoop = async (): Promise<BusyLoop> => {
  const chrt = hasChrt()
  const spinners: Array<ChildProcess> = []
  for (let core = 0; core < availableParallelism(); core++) {
    const spinner = chrt
      ? spawn("chrt", ["--idle", "0", process.execPath, "-e", SPIN], { stdio: "ignore" })
      : spawn(process.execPath, ["-e", SPIN], { stdio: "ignore" })
    if (!chrt && spinner.pid !== undefined) setPriority(spinner.pid, 19)
    spinners.push(spinner)
  }
  // Long enough for both to be scheduled and the CPUs to leave their idle states.
  await new Promise((resolve) => setTimeout(resolve, 300))
  return {
    stop: async () => {
      await Promise.all(
        spinners.map(
          (spinner) =>
            new Promise<void>((resolve) => {
              if (spinner.exitCode !== null || spinner.signalCode !== null) return resolve()
              spinner.once("exit", () => resolve())
              spinner.kill("SIGTERM")
            })
        )
      )
    }
  }
}

/** Microseconds per round trip of 64 bytes with a process started by fork() that echoes them over loopback TCP. */
const roundTripMicros = async (milliseconds: number): Promise<number> => {
  const echo = forkChild("echo.js", [])
  try {
    const url = new URL((await messageOf(echo, "ready")).url)
    const socket = connect(Number(url.port), url.hostname)
    socket.setNoDelay(true)
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve)
      socket.once("error", reject)
    })
    const message = Buffer.alloc(64, 1)
    /** Round trips until `until`; a message may arrive in pieces, so a trip ends when all 64 bytes are back. */
    const trips = (until: number): Promise<number> =>
      new Promise((resolve) => {
        let count = 0
        let received = 0
        const onData = (chunk: Buffer) => {
          received += chunk.length
          if (received < message.length) return
          received = 0
          count++
          if (performance.now() < until) socket.write(message)
          else {
            socket.off("data", onData)
            resolve(count)
          }
        }
        socket.on("data", onData)
        socket.write(message)
      })
    await trips(performance.now() + 100)
    const started = performance.now()
    const count = await trips(started + milliseconds)
    socket.destroy()
    return ((performance.now() - started) * 1000) / count
  } finally {
    await stopChild(echo)
  }
}

/** Nanoseconds per iteration of a loop that only computes (a linear congruential generator). */
const loopNanos = (): number => {
  const iterations = 50_000_000
  let state = 1
  const started = performance.now()
  for (let index = 0; index < iterations; index++) state = (Math.imul(state, 1103515245) + 12345) | 0
  const nanos = ((performance.now() - started) * 1e6) / iterations
  // Using the result keeps the loop from being optimised away.
  return state === 0.5 ? Number.NaN : nanos
}

export interface Calibration {
  /** µs per loopback round trip between two processes, the machine as found. */
  readonly roundTripMicros: number
  /** The same with the busy-loop on every core. */
  readonly roundTripMicrosBusyLoop: number
  /** ns per iteration of a counting loop, the machine as found. */
  readonly loopNanos: number
}

/** Round trips this many times slower as found than with the busy-loop: the machine was idle. */
export const IDLE_SLOWDOWN = 1.5

export const calibrate = async (): Promise<Calibration> => {
  const asFound = await roundTripMicros(1000)
  const nanos = loopNanos()
  const busyLoop = await startBusyLoop()
  try {
    return { roundTripMicros: asFound, roundTripMicrosBusyLoop: await roundTripMicros(1000), loopNanos: nanos }
  } finally {
    await busyLoop.stop()
  }
}

/** How the machine behaved during a calibration: idle when its round trips were much slower than with the busy-loop. */
export const behavedAs = (calibration: Calibration): MachineMode =>
  calibration.roundTripMicros / calibration.roundTripMicrosBusyLoop >= IDLE_SLOWDOWN ? "idle" : "busy"
