import { startLivePreferences } from "./server.js"

const server = await startLivePreferences({
  host: process.env["HOST"] || "127.0.0.1",
  port: Number(process.env["PORT"] || 3000)
})
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void server.close())
console.log(`live-preferences: open ${server.url}/#token=${server.token}`)
console.log(`change them: curl -X PUT ${server.url}/api/users/v1/preferences/language/ \\
  -H "Authorization: Bearer ${server.token}" -H 'Content-Type: application/json' -d '{"language":"pt-BR"}'`)
