import { initContract } from "@ts-rest/core"
import { initServer } from "@ts-rest/fastify"
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify"
import type { AddressInfo } from "node:net"
import { z } from "zod"
import {
  authenticate,
  canonicalLanguage,
  INVALID_BODY_DETAIL,
  LANGUAGE_MAX_LENGTH,
  makeDefaultPaymentMethod,
  mergePreferences,
  NOT_FOUND_DETAIL,
  problem,
  problemBody,
  responseHeaders,
  TIMEZONE,
  unauthorized,
  VALIDATION_FAILED_DETAIL,
  type BareResponse,
  type BareStore
} from "./bare-domain.js"
import { BODY_LIMIT, type BareServer } from "./bare-servers.js"
import { LANGUAGE_PATH } from "./workload.js"

/**
 * Peer: ts-rest on Fastify 5, written as ts-rest's documentation writes it (a contract from `initContract()` with zod
 * body schemas, `initServer().router(...)`, `s.registerRouter(contract, router, app)`), doing the bare baselines' work
 * through bare-domain.ts: the same token-digest lookup, the same field checks (as zod schemas with bare-domain's
 * limits), the same merges, response bytes and headers.
 *
 * Where it differs from bare Fastify:
 * - the credential is checked in a `preValidation` hook (ts-rest validates the body before its handler runs, so a
 *   check in the handler would answer 400 before 401); that is after Fastify has parsed the body, as in bare Fastify;
 * - the body is checked by zod (`safeParse`, strict objects) instead of by hand, and the handler returns an object
 *   that Fastify serializes with JSON.stringify instead of a string built by hand: the same bytes;
 * - a zod failure goes through ts-rest's `requestValidationErrorHandler`, set here to answer bare's problem body.
 */

const c = initContract()

const Problem = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number(),
  detail: z.string(),
  code: z.string()
})

const LanguagePreferences = z.object({
  id: z.number(),
  language: z.string(),
  timezone: z.number(),
  mfa_enabled: z.boolean(),
  created_at: z.string(),
  updated_at: z.string()
})

const PaymentMethod = z.object({
  id: z.string(),
  is_default: z.boolean(),
  created_at: z.string(),
  updated_at: z.string()
})

/** A BCP 47 tag, decoded to its canonical form. */
const LanguageTag = z
  .string()
  .min(1)
  .max(LANGUAGE_MAX_LENGTH)
  .transform((tag, context) => {
    const canonical = canonicalLanguage(tag)
    if (canonical !== undefined) return canonical
    context.addIssue({ code: z.ZodIssueCode.custom, message: "Not a well-formed BCP 47 language tag" })
    return z.NEVER
  })

/** Merge-PUT: every field optional, unknown fields refused, the read-only fields of the record accepted and ignored. */
const UpdateLanguagePreferences = z
  .object({
    language: LanguageTag.optional(),
    timezone: z.number().int().min(TIMEZONE.minimum).max(TIMEZONE.maximum).multipleOf(TIMEZONE.step).optional(),
    mfa_enabled: z.boolean().optional(),
    id: z.unknown(),
    created_at: z.unknown(),
    updated_at: z.unknown()
  })
  .strict()

/** No body, `{}` or `{"is_default": true}`. */
const SetDefaultPaymentMethod = z
  .object({ is_default: z.literal(true).optional() })
  .strict()
  .optional()

export const contract = c.router({
  updateLanguagePreferences: {
    method: "PUT",
    path: LANGUAGE_PATH,
    body: UpdateLanguagePreferences,
    responses: { 200: LanguagePreferences, 400: Problem, 401: Problem },
    summary: "Merge the caller's language preferences"
  },
  setDefaultPaymentMethod: {
    method: "PUT",
    path: "/api/payments/v1/payment-methods/:id/",
    body: SetDefaultPaymentMethod,
    responses: { 200: PaymentMethod, 400: Problem, 401: Problem, 404: Problem },
    summary: "Make one of the caller's payment methods the default"
  }
})

const USER = "benchUser"

const send = (reply: FastifyReply, response: BareResponse): void => {
  void reply.code(response.status).headers(response.headers).send(response.body)
}

export const startTsRestFastify = async (store: BareStore): Promise<BareServer> => {
  const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT })
  app.decorateRequest(USER, "")
  const s = initServer()
  const router = s.router(contract, {
    updateLanguagePreferences: async ({ body, request, reply }) => {
      void reply.headers(responseHeaders(200))
      const view = mergePreferences(store, request.getDecorator<string>(USER), body)
      return { status: 200, body: view }
    },
    setDefaultPaymentMethod: async ({ params, request, reply }) => {
      const view = makeDefaultPaymentMethod(store, request.getDecorator<string>(USER), params.id)
      if (view === undefined) {
        void reply.headers(responseHeaders(404))
        return { status: 404, body: problemBody(404, "not_found", NOT_FOUND_DETAIL) }
      }
      void reply.headers(responseHeaders(200))
      return { status: 200, body: view }
    }
  })
  s.registerRouter(contract, router, app, {
    logInitialization: false,
    hooks: {
      preValidation: (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
        const user = authenticate(store, request.headers.authorization)
        // Answering from a hook: send, and do not call done.
        if (user === undefined) return send(reply, unauthorized())
        request.setDecorator(USER, user)
        done()
      }
    },
    // ts-rest's default answers 400 with its own body ({ pathParameterErrors, headerErrors, queryParameterErrors,
    // bodyErrors } with zod's issues); this gives bare's problem body instead.
    requestValidationErrorHandler: (_error, request, reply) => {
      const body = request.body
      const isObject = typeof body === "object" && body !== null && !Array.isArray(body)
      send(
        reply,
        isObject
          ? problem(400, "validation_failed", VALIDATION_FAILED_DETAIL)
          : problem(400, "invalid_body", INVALID_BODY_DETAIL)
      )
    }
  })
  await app.listen({ host: "127.0.0.1", port: 0 })
  const { port } = app.server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() }
}
