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
  message: "Core is runtime-neutral: Node-only APIs belong in packages/core/src/node (exported as @accord/core/node)."
}

/** Core knows no framework, no driver, no logger, no other Accord package. */
const coreForbidden = [
  {
    regex: "^(koa|fastify|pg|pino|jose)(/.*)?$",
    message:
      "Core is framework-free: frameworks, drivers, loggers and JWT libraries belong in adapters, stores or auth packages."
  },
  { regex: "^(@koa|@fastify|@electric-sql)/", message: "Core is framework-free: no framework or driver packages." },
  { regex: "^@accord/", message: "Core imports no other Accord package (and itself only through relative paths)." }
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
    files: ["packages/core/src/**"],
    ignores: ["packages/core/src/node/**"],
    rules: {
      "no-restricted-imports": restrictImports(...coreForbidden, nodeBuiltins),
      "no-restricted-globals": [
        "error",
        ...["process", "Buffer", "__dirname", "__filename", "require", "global", "setImmediate", "clearImmediate"].map(
          (name) => ({
            name,
            message: "Core is runtime-neutral: Node globals belong in packages/core/src/node."
          })
        )
      ]
    }
  },
  {
    files: ["packages/core/src/node/**"],
    rules: { "no-restricted-imports": restrictImports(...coreForbidden) }
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
        { regex: "^(@koa|@fastify)/", message: "Stores know no HTTP framework." }
      )
    }
  },
  {
    files: ["packages/adapter-*/src/**"],
    rules: {
      "no-restricted-imports": restrictImports({
        regex: "^@accord/(store-.*|server)(/.*)?$",
        message: "Adapters import core only: the host hands them a runtime holding the store."
      })
    }
  }
)
