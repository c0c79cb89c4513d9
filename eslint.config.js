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

/** Core knows no framework, no driver, no logger, no UI, and no Accord package but the contract it implements. */
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
    regex: "^@accord/(?!contract$)",
    message:
      "Core imports no Accord package but @accord/contract, the API it implements (and itself only through relative paths)."
  }
]

/** The domain is the innermost layer: the HTTP binding and the use cases build on it, never the other way round. */
const domainForbidden = [
  {
    regex: "^(\\.\\./)+(http|use-cases)(/.*)?$",
    message: "The domain imports neither the HTTP binding nor the use cases."
  },
  {
    regex: "^(\\.\\./)+index(\\.js)?$",
    message: "The domain imports neither the HTTP binding nor the use cases (nor core's index, which exports both)."
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
    regex: "^@accord/(store-.*|adapter-.*|server|testkit|conformance)(/.*)?$",
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
    regex: "^@accord/(?!contract$)",
    message:
      "@accord/client imports @accord/contract only (its operations and Schemas), never core (use cases, ports) or a Node or server package."
  }
]

/** The contract is the API as data: it depends on effect alone (the client and the audits need only it). */
const contractForbidden = [
  {
    regex: "^(?!(effect(/.*)?|\\.{1,2}/.*)$)",
    message:
      "@accord/contract depends on effect alone: no Accord package (core binds to the contract, not the reverse), no Node API, no other library."
  }
]

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

const restrictImports = (...patterns) => ["error", { patterns }]

export default defineConfig(
  { ignores: ["**/dist/**", "**/node_modules/**", "**/coverage/**"] },
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
    // A later block's options replace an earlier one's for the same rule: core's list again, plus the domain's own.
    files: ["packages/core/src/domain/**"],
    rules: { "no-restricted-imports": restrictImports(...coreForbidden, nodeBuiltins, ...domainForbidden) }
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
          regex: "^@accord/(adapter-.*|server)(/.*)?$",
          message: "Stores import core only, never an adapter or the server."
        },
        { regex: "^(koa|fastify)(/.*)?$", message: "Stores know no HTTP framework." },
        { regex: "^(@koa|@fastify)/", message: "Stores know no HTTP framework." },
        {
          regex: "^@accord/node$",
          message: "Stores take token digests from @accord/node/token-digest, without the HTTP bridge and servers."
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
          regex: "^@accord/(?!core$)",
          message: "@accord/rate-limit imports @accord/core only (its RateLimiter interface)."
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
    files: ["packages/adapter-*/src/**"],
    rules: {
      "no-restricted-imports": restrictImports({
        regex: "^@accord/(store-.*|server)(/.*)?$",
        message: "Adapters import core and @accord/node only: the host hands them a runtime holding the store."
      })
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
