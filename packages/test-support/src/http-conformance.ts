import type { SeedInput } from "@accord/domain"
import type { RunningServer } from "@accord/node/server"
import { afterAll, beforeAll, describe, it } from "@effect/vitest"
import { httpAudits, makeAuditFixture, unmetNeeds, type AuditTarget } from "@accord/conformance"

/** Starts the server under test with `seed` loaded; the API must be mounted at `/api`. */
export type StartServer = (seed: SeedInput) => Promise<RunningServer>

/**
 * The HTTP contract (docs/api.md) as a vitest suite: one test per audit of `httpAudits`, named by its id and title,
 * against one server started with a seed it builds (`makeAuditFixture`, so the audits that need a seeded store run
 * too) and closed at the end. Not covered because a black box cannot provoke them: 503 (store unreachable, hashing
 * saturated) and 500; the drain on close is the server package's test.
 */
export const runHttpConformance = (name: string, startServer: StartServer): void => {
  describe(`HTTP conformance: ${name}`, () => {
    const fixture = makeAuditFixture()
    let server: RunningServer | undefined
    let target: AuditTarget | undefined

    beforeAll(async () => {
      server = await startServer(fixture.seed)
      target = fixture.target(`${server.url}/api`)
    }, 30_000)
    afterAll(async () => {
      await server?.close()
    }, 30_000)

    for (const audit of httpAudits) {
      it(
        `${audit.id}: ${audit.title}`,
        async () => {
          if (target === undefined) throw new Error("the server did not start")
          const unmet = unmetNeeds(audit, target)
          if (unmet !== undefined) throw new Error(`${audit.id} ${unmet}`)
          await audit.run(target)
        },
        audit.timeoutMs
      )
    }
  })
}
