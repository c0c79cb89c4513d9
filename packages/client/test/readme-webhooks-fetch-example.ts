import { verifyWebhook, WebhookVerificationError } from "@accord/client/webhooks"

// A fetch handler (Workers, Deno, Bun, Hono): the body exactly as received, then the event, or 400 and why.
export const onWebhook = async (request: Request, secret: string): Promise<Response> => {
  try {
    const event = await verifyWebhook(secret, request.headers, new Uint8Array(await request.arrayBuffer()))
    console.log(event.type, event.subject)
    return new Response(null, { status: 204 }) // any 2xx: delivered (deduplicate by event.id)
  } catch (error) {
    if (error instanceof WebhookVerificationError) return new Response(error.reason, { status: 400 })
    throw error
  }
}
