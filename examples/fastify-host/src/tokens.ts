import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JSONWebKeySet } from "jose"

export const JWT_ISSUER = "https://fastify-host.example"
export const JWT_AUDIENCE = "accord-api"
/** The scope that marks an application (client) token, whose id is its `client_id`. */
export const CLIENT_SCOPE = "accord:client"

/**
 * The host's own signing key, made at start: the host signs its users' tokens with the private key, and Accord
 * verifies them with the public half, handed over as a local JWKS. Nothing is fetched; a host whose tokens come from
 * an identity provider passes `{ jwksUrl }` instead and signs nothing.
 */
export interface DemoKeys {
  readonly privateKey: CryptoKey
  /** The public key set, as the host also publishes it at `/.well-known/jwks.json`. */
  readonly jwks: JSONWebKeySet
  readonly kid: string
}

export const makeDemoKeys = async (): Promise<DemoKeys> => {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true })
  const kid = `demo-${Date.now().toString(36)}`
  return { privateKey, kid, jwks: { keys: [{ ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" }] } }
}

export interface DemoTokenOptions {
  /** A jose duration (`"10m"`) or an absolute time in seconds since the epoch. Default one hour. */
  readonly expiresIn?: string | number
  /** Issue an application token for client `sub` instead of a user token. */
  readonly client?: boolean
}

/** A token such as the host's sign-in hands out: a user's (`sub`) or an application's (`client_id`). */
export const issueDemoToken = (
  keys: Pick<DemoKeys, "privateKey" | "kid">,
  sub: string,
  options: DemoTokenOptions = {}
): Promise<string> =>
  new SignJWT(options.client === true ? { client_id: sub, scope: CLIENT_SCOPE } : {})
    .setProtectedHeader({ alg: "ES256", kid: keys.kid })
    .setSubject(sub)
    .setIssuer(JWT_ISSUER)
    .setAudience(JWT_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? "1h")
    .sign(keys.privateKey)
