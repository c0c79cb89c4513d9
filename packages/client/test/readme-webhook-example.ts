// README:start
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { verifyWebhook } from "@accord/client/webhooks"

// The endpoint's secret as the server has it in WEBHOOK_SECRET, taken as it is (several during a rotation).
const secret = process.env["WEBHOOK_SECRET"] ?? ""

const receiver = createServer(async (request, response) => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  try {
    // The body exactly as received: verifyWebhook checks the signature and the timestamp, then types the event.
    const event = await verifyWebhook(secret, request.headers, Buffer.concat(chunks))
    if (event.type === "payment_method.default_changed")
      console.log(`${event.subject}: default ${event.data.previous_default_id} -> ${event.data.payment_method_id}`)
    response.writeHead(204).end() // any 2xx: delivered (deduplicate by event.id: at least once)
  } catch {
    response.writeHead(400).end()
  }
})
// This machine only; a receiver other machines reach sits behind a proxy with TLS.
receiver.listen(Number(process.env["RECEIVER_PORT"] ?? 8080), "127.0.0.1", () =>
  console.log(`listening on http://127.0.0.1:${(receiver.address() as AddressInfo).port}`)
)
// README:end
