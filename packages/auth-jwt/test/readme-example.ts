import { Authenticator } from "@accord/domain"
import { JwtAuthenticatorLive } from "@accord/auth-jwt"
import { Effect } from "effect"
import { SignJWT } from "jose"

const secret = "replace-me-with-at-least-32-random-bytes"

const JwtAuthLive = JwtAuthenticatorLive({
  key: { secret }, // or { jwksUrl: "https://login.example.com/.well-known/jwks.json" }
  issuer: "https://login.example.com",
  audience: "accord-api",
  client: { claim: "client_id", scope: "accord:client" }
})

// Two tokens as an identity provider would issue them: one for a user, one for an application.
const issue = (claims: Record<string, string>) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setIssuer("https://login.example.com")
    .setAudience("accord-api")
    .setExpirationTime("10m")
    .sign(new TextEncoder().encode(secret))

const userToken = await issue({ sub: "u_1", client_id: "web", scope: "openid" })
const clientToken = await issue({ sub: "web", client_id: "web", scope: "accord:client" })

const program = Effect.gen(function* () {
  const authenticator = yield* Authenticator
  for (const token of [userToken, clientToken, "not-a-jwt"]) {
    const outcome = yield* Effect.result(authenticator.authenticate(token))
    console.log(outcome._tag === "Success" ? outcome.success : outcome.failure.reason)
  }
})

await Effect.runPromise(Effect.provide(program, JwtAuthLive))
// { userId: 'u_1', _tag: 'User' }
// { clientId: 'web', _tag: 'Client' }
// invalid_token
