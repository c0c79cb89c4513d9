import { auditTarget, httpAudits, runAudits } from "@accord/conformance/audits"

// seed.json's two users and client, on a server started with `npm start -- --seed seed.json`.
const target = auditTarget({
  url: process.env["ACCORD_URL"] ?? "http://127.0.0.1:3000/api",
  userToken: "u1-demo-token-7f3c9a",
  otherUserToken: "u2-demo-token-b41e02",
  clientToken: "web-demo-client-5d8e61"
})

// One after another (they share the users), each result as it comes: pass, fail with a reason, or skip.
export const results = await runAudits(httpAudits, target, (result) => {
  if (result.status === "fail") console.error(`${result.level} ${result.id}: ${result.reason}`)
})
export const mustFailures = results.filter((result) => result.status === "fail" && result.level === "MUST")
