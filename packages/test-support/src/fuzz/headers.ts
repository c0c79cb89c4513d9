import fc from "fast-check"
import type { FuzzFixture } from "./fixture.js"
import type { Actor } from "./fuzz-case.js"

// The request headers the fuzz sends: media types, transfer codings, credentials (whose actor the oracle reads) and
// request ids.

export interface ContentTypeChoice {
  readonly contentType: string | undefined
  readonly json: boolean | undefined
}

export const latin1Arb = fc
  .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff }))
  .map((code) => String.fromCharCode(code))

export const contentTypeArb: fc.Arbitrary<ContentTypeChoice> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .constantFrom(
        "application/json",
        "application/json; charset=utf-8",
        "application/json;charset=UTF-8",
        'Application/JSON; charset="utf8"',
        "APPLICATION/JSON",
        "application/json; charset=utf-8; foo=bar",
        " application/json "
      )
      .map((contentType) => ({ contentType, json: true }))
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        undefined,
        "text/plain",
        "application/json; charset=latin1",
        "application/json; charset=utf-16",
        "application/merge-patch+json",
        "application/problem+json",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "",
        "application/json;",
        "application/json; charset",
        "application/jsonx",
        "json",
        "*/*",
        "application/json, text/plain"
      )
      .map((contentType) => ({ contentType, json: false }))
  },
  {
    weight: 1,
    arbitrary: fc.string({ unit: latin1Arb, maxLength: 40 }).map((contentType) => ({ contentType, json: undefined }))
  }
)

/**
 * Mostly `Content-Length`; some chunked, a few in another case or with a coding before chunked (501 where a body is
 * read). Those few go on a raw socket each, a connection of their own: rare, so that the run stays fast.
 */
export const transferEncodingArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 120, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: fc.constant("chunked") },
  { weight: 1, arbitrary: fc.constantFrom("Chunked", "CHUNKED") },
  {
    weight: 1,
    arbitrary: fc.constantFrom("gzip, chunked", "deflate, chunked", "identity, chunked", "br,chunked", "x-zip, chunked")
  }
)

export interface CredentialChoice {
  readonly actor: Actor
  readonly authorization: string | undefined
}

const TOKEN_TEXT = /^[A-Za-z0-9._~+/-]{1,60}={0,2}$/

export const credentialArb = (
  fixture: FuzzFixture,
  weights: Readonly<Partial<Record<Actor, number>>>
): fc.Arbitrary<CredentialChoice> => {
  // Leading and trailing whitespace is not part of a header value (Node strips it), so it still names the user.
  const carrying = (actor: Actor, token: string) =>
    fc
      .tuple(
        fc.constantFrom("Bearer", "bearer", "BEARER", "Token", "token", "tOkEn"),
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom("", "", " ", "\t")
      )
      .map(([scheme, spaces, pad]): CredentialChoice => ({
        actor,
        authorization: `${pad}${scheme}${" ".repeat(spaces)}${token}${pad}`
      }))
  const { a, b, client } = fixture
  const choices: Record<Actor, fc.Arbitrary<CredentialChoice>> = {
    a: carrying("a", a.token),
    b: carrying("b", b.token),
    client: carrying("client", client.token),
    none: fc
      .constantFrom(
        undefined,
        "",
        "   ",
        "Basic eDp5",
        "Digest username=x",
        `Bearer\t${a.token}`,
        `Bearer${a.token}`,
        `Bearerx ${a.token}`,
        "Negotiate abc",
        `Basic ${a.token}`
      )
      .map((authorization): CredentialChoice => ({ actor: "none", authorization })),
    malformed: fc
      .constantFrom(
        "Bearer",
        "Token    ",
        "Bearer a$b",
        `Bearer ${"a".repeat(513)}`,
        `Bearer ${a.token} x`,
        "Bearer =abc",
        `Bearer ${a.token}%`,
        `Token ${client.token},`,
        "Bearer é"
      )
      .map((authorization): CredentialChoice => ({ actor: "malformed", authorization })),
    unknown: fc
      .oneof(
        fc.constantFrom(
          `${a.token}=`,
          a.token.toUpperCase(),
          `${"a".repeat(512)}==`,
          `${client.token}x`,
          "unknown-token"
        ),
        fc.stringMatching(TOKEN_TEXT).filter((token) => ![a.token, b.token, client.token].includes(token))
      )
      .map((token): CredentialChoice => ({ actor: "unknown", authorization: `Bearer ${token}` })),
    random: fc
      .string({ unit: latin1Arb, maxLength: 80 })
      .map((authorization): CredentialChoice => ({ actor: "random", authorization }))
  }
  const weighted = (Object.keys(choices) as Array<Actor>).map((actor) => ({
    weight: weights[actor] ?? 1,
    arbitrary: choices[actor]
  }))
  return fc.oneof(...weighted)
}

export const requestIdArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.stringMatching(/^[A-Za-z0-9._-]{1,128}$/) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "r".repeat(128),
      "r".repeat(129),
      "a b",
      "é",
      "",
      " padded ",
      "x/y",
      "<script>",
      "id,other",
      "\tx"
    )
  },
  { weight: 1, arbitrary: fc.string({ unit: latin1Arb, maxLength: 140 }) }
)
