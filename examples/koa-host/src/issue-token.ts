import { issueDemoToken, jwtSecretFrom } from "./tokens.js"

// Usage: npm run token -w @accord/example-koa-host -- u_1 [--client]
const [sub = "u_1", ...flags] = process.argv.slice(2)
console.log(await issueDemoToken(sub, { secret: jwtSecretFrom(process.env), client: flags.includes("--client") }))
