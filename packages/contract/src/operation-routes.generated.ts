// Generated from the operations (src/operations/*.ts) and the checks (src/checks.ts) by `npm run generate`: do not
// edit. What a client needs to call each operation, as plain data with no Schema: @accord/client reads it alone.
import type { OperationRoutes } from "./operation-routes.js"

export const OPERATION_ROUTES: OperationRoutes = {
  createPublicPlanEntry: {
    method: "POST",
    path: "/plans/v1/subscription-plans/public/",
    params: [],
    query: [],
    access: "anyCredential",
    body: true,
    conditional: undefined,
    success: 201,
    problems: {
      invalid_json: 400,
      invalid_body: 400,
      validation_failed: 400,
      unauthenticated: 401,
      invalid_token: 401,
      payload_too_large: 413,
      unsupported_media_type: 415,
      not_implemented: 501,
      rate_limited: 429,
      uri_too_long: 414,
      unavailable: 503,
      internal: 500,
      bad_request: 400,
      request_timeout: 408,
      headers_too_large: 431
    }
  },
  getLanguagePreferences: {
    method: "GET",
    path: "/users/v1/preferences/language/",
    params: [],
    query: [],
    access: "user",
    body: false,
    conditional: "ifNoneMatch",
    success: 200,
    problems: {
      unauthenticated: 401,
      invalid_token: 401,
      insufficient_scope: 403,
      rate_limited: 429,
      uri_too_long: 414,
      unavailable: 503,
      internal: 500,
      bad_request: 400,
      request_timeout: 408,
      headers_too_large: 431
    }
  },
  updateLanguagePreferences: {
    method: "PUT",
    path: "/users/v1/preferences/language/",
    params: [],
    query: [],
    access: "user",
    body: true,
    conditional: "ifMatchRequirable",
    success: 200,
    problems: {
      invalid_json: 400,
      invalid_body: 400,
      validation_failed: 400,
      unauthenticated: 401,
      invalid_token: 401,
      insufficient_scope: 403,
      payload_too_large: 413,
      unsupported_media_type: 415,
      not_implemented: 501,
      rate_limited: 429,
      precondition_failed: 412,
      precondition_required: 428,
      uri_too_long: 414,
      unavailable: 503,
      internal: 500,
      bad_request: 400,
      request_timeout: 408,
      headers_too_large: 431
    }
  },
  listEvents: {
    method: "GET",
    path: "/users/v1/events/",
    params: [],
    query: ["after", "limit"],
    access: "user",
    body: false,
    conditional: "ifNoneMatch",
    success: 200,
    problems: {
      invalid_query: 400,
      invalid_cursor: 400,
      unauthenticated: 401,
      invalid_token: 401,
      insufficient_scope: 403,
      not_acceptable: 406,
      rate_limited: 429,
      too_many_streams: 429,
      uri_too_long: 414,
      unavailable: 503,
      internal: 500,
      bad_request: 400,
      request_timeout: 408,
      headers_too_large: 431
    }
  },
  listPaymentMethods: {
    method: "GET",
    path: "/payments/v1/payment-methods/",
    params: [],
    query: [],
    access: "user",
    body: false,
    conditional: "ifNoneMatch",
    success: 200,
    problems: {
      unauthenticated: 401,
      invalid_token: 401,
      insufficient_scope: 403,
      rate_limited: 429,
      uri_too_long: 414,
      unavailable: 503,
      internal: 500,
      bad_request: 400,
      request_timeout: 408,
      headers_too_large: 431
    }
  },
  setDefaultPaymentMethod: {
    method: "PUT",
    path: "/payments/v1/payment-methods/{id}/",
    params: ["id"],
    query: [],
    access: "user",
    body: true,
    conditional: "ifMatch",
    success: 200,
    problems: {
      invalid_json: 400,
      invalid_body: 400,
      validation_failed: 400,
      unauthenticated: 401,
      invalid_token: 401,
      insufficient_scope: 403,
      not_found: 404,
      payload_too_large: 413,
      unsupported_media_type: 415,
      not_implemented: 501,
      rate_limited: 429,
      precondition_failed: 412,
      uri_too_long: 414,
      unavailable: 503,
      internal: 500,
      bad_request: 400,
      request_timeout: 408,
      headers_too_large: 431
    }
  },
  health: {
    method: "GET",
    path: "/health",
    params: [],
    query: [],
    access: "public",
    body: false,
    conditional: undefined,
    success: 200,
    problems: {
      uri_too_long: 414,
      unavailable: 503,
      internal: 500,
      bad_request: 400,
      request_timeout: 408,
      headers_too_large: 431
    }
  },
  liveness: {
    method: "GET",
    path: "/health/live",
    params: [],
    query: [],
    access: "public",
    body: false,
    conditional: undefined,
    success: 200,
    problems: {
      uri_too_long: 414,
      internal: 500,
      bad_request: 400,
      request_timeout: 408,
      headers_too_large: 431
    }
  },
  readiness: {
    method: "GET",
    path: "/health/ready",
    params: [],
    query: [],
    access: "public",
    body: false,
    conditional: undefined,
    success: 200,
    problems: {
      uri_too_long: 414,
      unavailable: 503,
      internal: 500,
      bad_request: 400,
      request_timeout: 408,
      headers_too_large: 431
    }
  }
}
