import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Webhook } from "standardwebhooks"

// A webhook receiver for the tests (docs/operations.md, "Events"): it verifies every request's signature with an
// independent implementation of Standard Webhooks (`standardwebhooks`) and records what it took; waits are for counts.

export const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`

export interface Delivery {
  readonly id: string
  readonly body: string
  /** When it was answered 2xx (`Date.now()`). */
  readonly at: number
}

/** What a receiver does with the n-th request it gets (0-based): answer it, or leave it hanging. */
export type Behaviour = (request: IncomingMessage, response: ServerResponse, n: number) => void

export const ok: Behaviour = (_request, response) => response.writeHead(204).end()

/** Resolves once `condition` holds, re-checked after each thing that may change it. */
export class Waiters {
  private readonly waiting: Array<{ readonly condition: () => boolean; readonly resolve: () => void }> = []
  until(condition: () => boolean): Promise<void> {
    if (condition()) return Promise.resolve()
    return new Promise((resolve) => this.waiting.push({ condition, resolve }))
  }
  changed(): void {
    for (const waiter of [...this.waiting]) {
      if (!waiter.condition()) continue
      this.waiting.splice(this.waiting.indexOf(waiter), 1)
      waiter.resolve()
    }
  }
}

/** An HTTP receiver that verifies every request with `standardwebhooks` under each of `secrets`. */
export const startReceiver = async (secrets: ReadonlyArray<string>, behaviour: Behaviour, port = 0) => {
  const deliveries: Array<Delivery> = []
  const unverified: Array<string> = []
  let requests = 0
  const waiters = new Waiters()
  const server: Server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      const headers = {
        "webhook-id": String(request.headers["webhook-id"]),
        "webhook-timestamp": String(request.headers["webhook-timestamp"]),
        "webhook-signature": String(request.headers["webhook-signature"])
      }
      for (const secret of secrets) {
        try {
          new Webhook(secret).verify(body, headers)
        } catch (error) {
          unverified.push(`${headers["webhook-id"]}: ${String(error)}`)
        }
      }
      const n = requests++
      // Recorded as delivered only when answered 2xx: what the relay counts as taken.
      const originalWriteHead = response.writeHead.bind(response)
      response.writeHead = ((status: number, ...rest: Array<never>) => {
        if (status >= 200 && status < 300) deliveries.push({ id: headers["webhook-id"], body, at: Date.now() })
        waiters.changed()
        return originalWriteHead(status, ...rest)
      }) as typeof response.writeHead
      behaviour(request, response, n)
      waiters.changed()
    })
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const address = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${address.port}/hooks?token=${randomBytes(4).toString("hex")}`,
    port: address.port,
    deliveries,
    unverified,
    requests: () => requests,
    until: (condition: () => boolean) => waiters.until(condition),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>
