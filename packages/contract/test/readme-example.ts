import {
  aliasRoutes,
  apiRoutes,
  makeOpenApiDocument,
  operations,
  PreferencesPatchBody,
  problemCodesOf
} from "@accord/contract"
import { Result, Schema } from "effect"

// An operation is data: its route, who may call it, its Schemas and the domain errors it declares.
const setDefault = operations.setDefaultPaymentMethod
console.log(setDefault.method, setDefault.path, setDefault.access, setDefault.errors)

// The problem codes an operation can be answered with follow from that declaration (docs/api.md, "Errors").
console.log(problemCodesOf(operations.readiness).join(" "))

// A body Schema decodes what a server reads, its wire rules included (a timezone is a multiple of 15).
const decodeBody = Schema.decodeUnknownResult(PreferencesPatchBody)
console.log(
  Result.isSuccess(decodeBody({ language: "en-US", timezone: 60 })),
  Result.isSuccess(decodeBody({ timezone: 7 }))
)

// The OpenAPI 3.1 document of the whole API, from the same declarations: a path for every route and deprecated alias.
const document = makeOpenApiDocument({ serverUrl: "/api" })
const pathCount = apiRoutes.length + aliasRoutes.length
console.log(document["openapi"], Object.keys(document["paths"] as object).length === pathCount)
// PUT /payments/v1/payment-methods/{id}/ user [ 'NotFound', 'PreconditionFailed', 'Unavailable' ]
// uri_too_long unavailable internal bad_request request_timeout headers_too_large
// true false
// 3.1.0 true
