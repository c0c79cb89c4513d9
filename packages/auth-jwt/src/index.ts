export { JwtAuthenticatorLive, makeJwtAuthenticator, MAX_JWKS_BYTES, principalOf } from "./authenticator.js"
export {
  ASYMMETRIC_ALGORITHMS,
  DEFAULT_CLOCK_TOLERANCE_SECONDS,
  HMAC_ALGORITHMS,
  JwtConfigError,
  jwtConfigFromEnv,
  resolveJwtConfig,
  type JwtAuthConfig,
  type JwtClientRule,
  type JwtEnv,
  type JwtKeySource,
  type JwtSetting,
  type ResolvedJwtConfig
} from "./config.js"
