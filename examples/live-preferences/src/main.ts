import { onStopSignals } from "@accord/node/stop-signals"
import { constants } from "node:os"
import { startLivePreferences } from "./server.js"

const server = await startLivePreferences({
  host: process.env["HOST"] || "127.0.0.1",
  port: Number(process.env["PORT"] || 3000)
})
// A terminal's Ctrl-C reaches this process and npm, which forwards its own copy: one within 1 s is the same stop, a
// later one ends the process at once (@accord/node/stop-signals). Closing ends the open streams; the page reconnects.
onStopSignals({
  drain: () => void server.close(),
  force: (signal) => process.exit(128 + constants.signals[signal])
})
console.log(`live-preferences: open ${server.url}/#token=${server.token}`)
console.log(`change them: curl -X PUT ${server.url}/api/users/v1/preferences/language/ \\
  -H "Authorization: Bearer ${server.token}" -H 'Content-Type: application/json' -d '{"language":"pt-BR"}'`)
