// A Cloudflare Worker (`compatibility_flags = ["nodejs_compat"]`): the fetch handler is the module's default export.
// The platform owns the drain there.
export { default } from "./accord.ts"
