import { builtinModules } from "node:module"
import js from "@eslint/js"
import { defineConfig } from "eslint/config"
import tseslint from "typescript-eslint"

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")

/** Node builtins by bare name (`fs`, `fs/promises`, `crypto`, ...) and every `node:` specifier. */
const nodeBuiltins = {
  regex: `^(node:.*|(${builtinModules
    .filter((name) => !name.startsWith("_"))
    .map(escape)
    .join("|")})(/.*)?)$`,
  message: "Core is runtime-neutral: Node-only APIs belong in @accord/node (packages/node)."
}

/** Core knows no framework, no driver, no logger, no UI; of Accord, only the domain it runs and the contract it serves. */
const coreForbidden = [
  {
    regex: "^(koa|fastify|express|pg|pino|jose)(/.*)?$",
    message:
      "Core is framework-free: frameworks, drivers, loggers and JWT libraries belong in adapters, stores or auth packages."
  },
  { regex: "^(@koa|@fastify|@electric-sql)/", message: "Core is framework-free: no framework or driver packages." },
  {
    regex: "^swagger-ui(-dist)?(/.*)?$",
    message: "Core serves no UI of its own: the API reference page is @accord/api-reference, passed as `docs`."
  },
  {
    regex: "^@accord/(?!(contract|domain)$)",
    message:
      "Core imports no Accord package but @accord/domain (what it runs) and @accord/contract (the API it serves), and itself only through relative paths."
  }
]

/**
 * The domain is the innermost layer: it owns its values and knows no wire form and no HTTP. It imports effect, the
 * CLDR alias data of its canonical language tags, and itself (docs/architecture.md).
 */
const domainForbidden = [
  {
    regex: "^(?!(effect(/.*)?|@formatjs/intl-getcanonicallocales|\\.{1,2}/.*)$)",
    message:
      "@accord/domain imports effect and itself only: no wire contract, no HTTP, no Node API, no other Accord package."
  }
]
/** Node glue and opt-in Node packages know no framework and no store: they serve every adapter alike. */
const nodeForbidden = [
  {
    regex: "^(koa|fastify|express|pg)(/.*)?$",
    message: "@accord/node and @accord/api-reference serve every adapter alike: no framework, no driver."
  },
  {
    regex: "^(@koa|@fastify|@electric-sql)/",
    message: "@accord/node and @accord/api-reference serve every adapter alike: no framework, no driver."
  },
  {
    regex: "^@accord/(store-.*|adapter-.*|server|testkit|conformance|test-support)(/.*)?$",
    message: "@accord/node and @accord/api-reference import core only: no store, adapter or server."
  }
]

/** The client runs in browsers and any fetch runtime: no Node API, no server-side package, the contract only. */
const clientForbidden = [
  { ...nodeBuiltins, message: "@accord/client runs in browsers and any fetch runtime: no Node-only API." },
  {
    regex: "^(koa|fastify|express|pg|pino|jose|hono)(/.*)?$",
    message: "@accord/client is a client: no server framework, driver, logger or JWT library."
  },
  {
    regex: "^(@koa|@fastify|@hono|@electric-sql)/",
    message: "@accord/client is a client: no server framework or driver."
  },
  {
    regex: "^@accord/(?!(contract|contract/routes|contract/webhook-secrets|domain/values)$)",
    message:
      "@accord/client imports @accord/contract (and the values it is made of) only, never core, the domain's use cases and ports, or a Node or server package."
  }
]

/**
 * The default client's files carry nothing of effect at run time (packages/client/README.md, "Bundle size"): the
 * contract's plain entries (`@accord/contract/routes`, `@accord/contract/webhook-secrets`) at run time, its Schemas
 * and effect as types only. The
 * Schema-checked client (validated.ts), the Effect flavour (effect.ts) and the events follower (events-stream.ts, which
 * decodes with the contract's event Schema) are entries of their own.
 */
const lightClientForbidden = {
  regex: "^(effect(/.*)?|@accord/contract|@accord/domain/values)$",
  message:
    "The default @accord/client carries no Schema and nothing of effect: import @accord/contract/routes, or types only (import type); Schemas belong in src/validated.ts, effect in src/effect.ts.",
  allowTypeImports: true
}

/**
 * The contract is the API as data: it depends on effect and the domain's values alone (a client carries only them);
 * the domain's records it names as types only (`import type`, allowed below).
 */
const contractForbidden = [
  {
    regex: "^(?!(effect(/.*)?|@accord/domain/values|\\.{1,2}/.*)$)",
    message:
      "@accord/contract depends on effect and @accord/domain/values alone (the domain's records as types only): core binds to the contract, not the reverse; no Node API, no other library.",
    allowTypeImports: true
  }
]

/** A published package imports no test runner: its users' production installs carry none (docs/architecture.md). */
const testRunnerForbidden = {
  regex: "^(vitest|@vitest/.*|@effect/vitest|fast-check)(/.*)?$",
  message:
    "A published package imports no test runner or property-test library: test machinery is @accord/test-support's."
}

/** An adapter is made of the request bridge and the standalone server; the hasher and the store are the host's. */
const adapterNodeRoles = {
  regex: "^@accord/node(?!/(bridge|server)$)(/.*)?$",
  message:
    "Adapters import @accord/node/bridge and @accord/node/server only: the password hasher and token digests belong to the host's runtime and the stores."
}

/** Node globals, refused where code must run on any runtime. */
const nodeGlobals = [
  "process",
  "Buffer",
  "__dirname",
  "__filename",
  "require",
  "global",
  "setImmediate",
  "clearImmediate"
]

/**
 * @accord/node has one entry point per role (bridge, server, scrypt, token-digest, stop-signals); its root, their union, is for
 * hosts. Accord's packages import the role they use, so that each loads only that (docs/architecture.md).
 */
const nodeUnionForbidden = {
  regex: "^@accord/node$",
  message:
    "Import the @accord/node role you use (@accord/node/bridge, /server, /scrypt, /token-digest or /stop-signals): the root, their union, is for hosts."
}

/**
 * A rule for a published package's sources: its own patterns, never a test runner and never @accord/node's union (a
 * later block replaces an earlier one).
 */
const restrictImports = (...patterns) => ["error", { patterns: [...patterns, testRunnerForbidden, nodeUnionForbidden] }]

export default defineConfig(
  // What examples/openapi-generators' README makes from a server's document (git-ignored): generated code.
  { ignores: ["**/dist/**", "**/node_modules/**", "**/coverage/**", "examples/openapi-generators/generated/**"] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/ban-ts-comment": "error",
      // `_` marks a value that is deliberately unused (e.g. `for (const _ of text)` counting code points).
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }]
    }
  },
  {
    // Every published package, the conformance audits included; the project's test machinery is the private
    // @accord/test-support, whose suites are vitest's.
    files: ["packages/*/src/**"],
    ignores: ["packages/test-support/src/**"],
    rules: { "no-restricted-imports": restrictImports() }
  },
  {
    // The committed bin entry points are plain JavaScript run by Node.
    files: ["packages/*/bin/*.js"],
    languageOptions: { globals: { process: "readonly" } }
  },
  {
    files: ["packages/contract/src/**"],
    rules: {
      "no-restricted-imports": restrictImports(...contractForbidden),
      "no-restricted-globals": [
        "error",
        ...nodeGlobals.map((name) => ({
          name,
          message: "@accord/contract runs anywhere effect does: no Node globals."
        }))
      ]
    }
  },
  {
    files: ["packages/core/src/**"],
    rules: {
      "no-restricted-imports": restrictImports(...coreForbidden, nodeBuiltins),
      "no-restricted-globals": [
        "error",
        ...nodeGlobals.map((name) => ({
          name,
          message: "Core is runtime-neutral: Node globals belong in @accord/node (packages/node)."
        }))
      ]
    }
  },
  {
    files: ["packages/domain/src/**"],
    rules: {
      "no-restricted-imports": restrictImports(...domainForbidden),
      "no-restricted-globals": [
        "error",
        ...nodeGlobals.map((name) => ({ name, message: "@accord/domain runs anywhere effect does: no Node globals." }))
      ]
    }
  },
  {
    files: ["packages/node/src/**", "packages/api-reference/src/**"],
    rules: { "no-restricted-imports": restrictImports(...nodeForbidden) }
  },
  {
    files: ["packages/store-*/src/**"],
    rules: {
      "no-restricted-imports": restrictImports(
        {
          regex: "^@accord/(core|contract|adapter-.*|server)(/.*)?$",
          message:
            "Stores implement the domain's ports: they import @accord/domain, never the HTTP pipeline, the wire contract, an adapter or the server."
        },
        { regex: "^(koa|fastify)(/.*)?$", message: "Stores know no HTTP framework." },
        { regex: "^(@koa|@fastify)/", message: "Stores know no HTTP framework." },
        {
          regex: "^@accord/node(?!/token-digest$)(/.*)?$",
          message:
            "Stores take token digests from @accord/node/token-digest alone: no request bridge, server or password hasher (the host adds the hasher)."
        }
      )
    }
  },
  {
    // The option table serves any command (the server's, the store's accord-migrate): it knows no Accord package.
    files: ["packages/cli-options/src/**"],
    rules: {
      "no-restricted-imports": restrictImports({
        regex: "^@accord/",
        message: "@accord/cli-options serves every command alike: it imports no Accord package."
      })
    }
  },
  {
    // The rate limit serves every adapter and the server alike: core's interface in, no framework, store or server.
    files: ["packages/rate-limit/src/**"],
    rules: {
      "no-restricted-imports": restrictImports(
        {
          regex: "^@accord/(?!(core|domain)$)",
          message: "@accord/rate-limit imports @accord/core (its RateLimiter interface) and @accord/domain only."
        },
        { regex: "^(koa|fastify|express)(/.*)?$", message: "@accord/rate-limit knows no HTTP framework." },
        { regex: "^(@koa|@fastify)/", message: "@accord/rate-limit knows no HTTP framework." }
      )
    }
  },
  {
    files: ["packages/client/src/**"],
    rules: {
      "no-restricted-imports": restrictImports(...clientForbidden),
      "no-restricted-globals": [
        "error",
        ...nodeGlobals.map((name) => ({
          name,
          message: "@accord/client runs in browsers and any fetch runtime: no Node globals."
        }))
      ]
    }
  },
  {
    // This block replaces the one above's import rule for these files, so its patterns come again.
    files: ["packages/client/src/**"],
    ignores: [
      "packages/client/src/validated.ts",
      "packages/client/src/effect.ts",
      "packages/client/src/events-stream.ts"
    ],
    rules: { "no-restricted-imports": restrictImports(...clientForbidden, lightClientForbidden) }
  },
  {
    files: ["packages/adapter-*/src/**"],
    rules: {
      "no-restricted-imports": restrictImports(
        {
          regex: "^@accord/(store-.*|server)(/.*)?$",
          message: "Adapters import core and @accord/node only: the host hands them a runtime holding the store."
        },
        adapterNodeRoles
      )
    }
  },
  {
    // The fetch adapter's main entry runs on Bun, Deno and Workers as on Node: no Node builtin, global or Node-only
    // package, like core. Its standalone Node server is src/node.ts. (This block replaces the adapters' rule above
    // for these files, so that rule's pattern comes again.)
    files: ["packages/adapter-fetch/src/**"],
    ignores: ["packages/adapter-fetch/src/node.ts"],
    rules: {
      "no-restricted-imports": restrictImports(
        {
          regex: "^@accord/(store-.*|server)(/.*)?$",
          message: "Adapters import core and @accord/node only: the host hands them a runtime holding the store."
        },
        {
          ...nodeBuiltins,
          message: "@accord/adapter-fetch runs on any fetch runtime: Node APIs belong in src/node.ts."
        },
        {
          regex: "^(@accord/node|@hono/node-server)(/.*)?$",
          message: "@accord/adapter-fetch runs on any fetch runtime: Node-only packages belong in src/node.ts."
        }
      ),
      "no-restricted-globals": [
        "error",
        ...nodeGlobals.map((name) => ({
          name,
          message: "@accord/adapter-fetch runs on any fetch runtime: Node globals belong in src/node.ts."
        }))
      ]
    }
  }
)
