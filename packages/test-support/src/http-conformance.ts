import type { SeedInput } from "@accord/domain"
import type { RunningServer } from "@accord/node/server"
import { afterAll, beforeAll, describe, it } from "@effect/vitest"
import { httpAudits, makeAuditFixture, unmetNeeds, type AuditTarget } from "@accord/conformance"

/** Starts the server under test with `seed` loaded; the API must be mounted at `/api`. */
export type StartServer = (seed: SeedInput) => Promise<RunningServer>

/** The SQL store records no events until phase B of issue 31 (its outbox): the audits that need some. */
export const SQL_EVENTS_PENDING: Readonly<Record<string, string>> = Object.fromEntries(
  ["ACC-events-record-changes", "ACC-events-pages", "ACC-events-refusals"].map((id) => [
    id,
    "the SQL store's outbox is phase B of issue 31"
  ])
)

/**
 * The HTTP contract (docs/api.md) as a vitest suite: one test per audit of `httpAudits`, named by its id and title,
 * against one server started with a seed it builds (`makeAuditFixture`, so the audits that need a seeded store run
 * too) and closed at the end. Not covered because a black box cannot provoke them: 503 (store unreachable, hashing
 * saturated) and 500; the drain on close is the server package's test.
 */
export const runHttpConformance = (
  name: string,
  startServer: StartServer,
  options: {
    /** Audits this server cannot pass yet, by id, with the reason each skipped test reports. */
    readonly pending?: Readonly<Record<string, string>>
  } = {}
): void => {
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
      const pending = options.pending?.[audit.id]
      if (pending !== undefined) {
        it.skip(`${audit.id}: ${audit.title} (skipped: ${pending})`, () => undefined)
        continue
      }
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
