// README:start
import { createServer } from "node:http"
import { verifyWebhook } from "@accord/client/webhooks"

// The endpoint's secret, as the server has it in WEBHOOK_SECRET (several, space-separated, during a rotation).
const secrets = (process.env["WEBHOOK_SECRET"] ?? "").split(" ")

export const receiver = createServer(async (request, response) => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  try {
    // The body exactly as received: verifyWebhook checks the signature and the timestamp, then types the event.
    const event = await verifyWebhook(secrets, request.headers, Buffer.concat(chunks))
    if (event.type === "payment_method.default_changed")
      console.log(`${event.subject}: default ${event.data.previous_default_id} -> ${event.data.payment_method_id}`)
    response.writeHead(204).end() // any 2xx: delivered (deduplicate by event.id: at least once)
  } catch {
    response.writeHead(400).end()
  }
})
receiver.listen(Number(process.env["RECEIVER_PORT"] ?? 8080))
// README:end
