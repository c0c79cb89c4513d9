import { SignJWT } from "jose"

/**
 * The HMAC secret the example signs and verifies with: `JWT_SECRET` from the environment, or a development default.
 * A real deployment sets its own (at least 32 random bytes) or, better, verifies an identity provider's tokens
 * through its JWKS URL and issues none itself.
 */
export const DEV_JWT_SECRET = "koa-host-development-secret-do-not-deploy-0b5e"

export const jwtSecretFrom = (env: Readonly<Record<string, string | undefined>>): string =>
  env["JWT_SECRET"] || DEV_JWT_SECRET

export const JWT_ISSUER = "https://koa-host.example"
export const JWT_AUDIENCE = "accord-api"
/** The scope that marks an application (client) token, whose id is its `client_id`. */
export const CLIENT_SCOPE = "accord:client"

export interface DemoTokenOptions {
  readonly secret?: string
  /** A jose duration (`"10m"`) or an absolute time in seconds since the epoch. Default one hour. */
  readonly expiresIn?: string | number
  /** Issue an application token for client `sub` instead of a user token. */
  readonly client?: boolean
}

/** A token such as the host's own sign-in would hand out: a user's (`sub`) or an application's (`client_id`). */
export const issueDemoToken = (sub: string, options: DemoTokenOptions = {}): Promise<string> =>
  new SignJWT(options.client === true ? { client_id: sub, scope: CLIENT_SCOPE } : {})
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(sub)
    .setIssuer(JWT_ISSUER)
    .setAudience(JWT_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? "1h")
    .sign(new TextEncoder().encode(options.secret ?? DEV_JWT_SECRET))
