import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import {
  chmod,
  chown,
  lchown,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  stat,
  symlink,
  writeFile
} from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { StoreAdmin } from "@accord/domain"
import { DATA_DIR_LOCK_FILE, DataDirInUse, DataDirUnusable, PgliteStoreLive } from "@accord/store-postgres"
import { holdDataDir } from "../src/data-dir.js"

// One process owns a PGlite data directory (its lock file, src/data-dir.ts): PGlite itself would let two write.

const tempDir = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "accord-data-dir-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

const lockOf = (dir: string) => join(dir, DATA_DIR_LOCK_FILE)
const readLock = (dir: string) => Effect.promise(() => readFile(lockOf(dir), "utf8"))
const writeLock = (dir: string, content: string) => Effect.promise(() => writeFile(lockOf(dir), content))

/** A process that runs until the scope closes: a live pid that is not this one. */
const otherProcess = Effect.acquireRelease(
  Effect.sync(() => spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore" })),
  (child) =>
    Effect.promise(
      () =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve()
          child.once("exit", () => resolve())
          child.kill("SIGKILL")
        })
    )
)

/** A pid no process has: one that ran and was reaped. */
const deadPid = Effect.scoped(
  Effect.gen(function* () {
    const child = yield* otherProcess
    const pid = child.pid ?? 0
    yield* Effect.promise(
      () =>
        new Promise<void>((resolve) => {
          child.once("exit", () => resolve())
          child.kill("SIGKILL")
        })
    )
    return pid
  })
)

/** Holds the directory for a moment: its lock names this process while held, and is gone once released. */
const holdOnce = (dir: string) =>
  Effect.gen(function* () {
    yield* Effect.scoped(
      Effect.gen(function* () {
        yield* holdDataDir(dir)
        expect(yield* readLock(dir)).toBe(`${process.pid}\n`)
      })
    )
    expect(existsSync(lockOf(dir))).toBe(false)
  })

/**
 * A process killed and never reaped: its parent (a shell that became `sleep`) never waits for it, so it stays a
 * zombie, which still answers kill(pid, 0), until the scope closes.
 */
const zombie = Effect.gen(function* () {
  const parent = yield* Effect.acquireRelease(
    Effect.sync(() =>
      spawn("sh", ["-c", "sh -c 'echo $$; kill -9 $$' & exec sleep 60"], { stdio: ["ignore", "pipe", "ignore"] })
    ),
    (child) => Effect.sync(() => child.kill("SIGKILL"))
  )
  const pid = yield* Effect.promise(
    () =>
      new Promise<number>((resolve) =>
        parent.stdout.setEncoding("utf8").once("data", (line: string) => resolve(Number(line.trim())))
      )
  )
  // Until the kill has landed: then /proc says Z.
  while (!(yield* Effect.promise(() => readFile(`/proc/${pid}/stat`, "utf8"))).match(/\) Z /))
    yield* Effect.sleep("10 millis")
  return pid
})

describe("holdDataDir", () => {
  it.live("creates the directory, holds a lock file naming this process, and removes it on release", () =>
    Effect.gen(function* () {
      yield* holdOnce(join(yield* tempDir, "nested", "data"))
    }).pipe(Effect.scoped)
  )

  it.live("makes the directory its owner's alone: created 0700, an existing one narrowed to 0700", () =>
    Effect.gen(function* () {
      const modeOf = (dir: string) => Effect.promise(() => stat(dir)).pipe(Effect.map((stats) => stats.mode & 0o777))
      const created = join(yield* tempDir, "new")
      yield* holdOnce(created)
      expect(yield* modeOf(created)).toBe(0o700)
      const existing = yield* tempDir
      yield* Effect.promise(() => chmod(existing, 0o755))
      yield* holdOnce(existing)
      expect(yield* modeOf(existing)).toBe(0o700)
    }).pipe(Effect.scoped)
  )

  it.live("refuses a directory this process holds already, and takes it once released", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const second = yield* Effect.scoped(
        Effect.gen(function* () {
          yield* holdDataDir(dir)
          return yield* Effect.flip(Effect.scoped(holdDataDir(dir)))
        })
      )
      expect(second).toEqual(new DataDirInUse({ dataDir: dir, pid: process.pid }))
      yield* holdOnce(dir)
    }).pipe(Effect.scoped)
  )

  it.live("refuses a directory whose lock names a live process, and leaves that lock alone", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const other = yield* otherProcess
      const pid = other.pid ?? 0
      yield* writeLock(dir, `${pid}\n`)
      const error = yield* Effect.flip(Effect.scoped(holdDataDir(dir)))
      expect(error).toEqual(new DataDirInUse({ dataDir: dir, pid }))
      expect(error.message).toBe(
        `the data directory ${dir} is in use by process ${pid}: one process at a time owns it ` +
          `(if no such process runs, remove ${lockOf(dir)})`
      )
      expect(yield* readLock(dir)).toBe(`${pid}\n`)
    }).pipe(Effect.scoped)
  )

  it.live("takes over a stale lock: a process that no longer runs (kill -9), or this pid from an earlier life", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      for (const stale of [`${yield* deadPid}\n`, `${process.pid}\n`, "", "garbage"]) {
        yield* writeLock(dir, stale)
        yield* holdOnce(dir)
      }
    }).pipe(Effect.scoped)
  )

  it.live.skipIf(!existsSync("/proc/self/stat"))(
    "takes over a lock whose process was killed but not yet reaped (a zombie; Linux only: skipped without /proc)",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const pid = yield* zombie
        expect(() => process.kill(pid, 0)).not.toThrow()
        yield* writeLock(dir, `${pid}\n`)
        yield* holdOnce(dir)
      }).pipe(Effect.scoped)
  )

  it.live("releases without removing a lock that no longer names this process", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const other = yield* otherProcess
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* holdDataDir(dir)
          yield* writeLock(dir, `${other.pid}\n`)
        })
      )
      expect(yield* readLock(dir)).toBe(`${other.pid}\n`)
    }).pipe(Effect.scoped)
  )

  it.live("fails with DataDirUnusable when the directory cannot be made", () =>
    Effect.gen(function* () {
      const file = join(yield* tempDir, "a-file")
      yield* Effect.promise(() => writeFile(file, "not a directory"))
      const error = yield* Effect.flip(Effect.scoped(holdDataDir(file)))
      expect(error).toBeInstanceOf(DataDirUnusable)
      expect(error.message).toContain(`cannot use the data directory ${file}: `)
    }).pipe(Effect.scoped)
  )
})

describe("PgliteStoreLive on a data directory held elsewhere", () => {
  it.live(
    "fails to build with DataDirInUse while another layer of this process has the directory open",
    () =>
      Effect.gen(function* () {
        const dataDir = yield* tempDir
        const ping = Effect.flatMap(StoreAdmin, (admin) => admin.ping)
        const second = yield* Effect.scoped(
          Effect.gen(function* () {
            yield* Layer.build(PgliteStoreLive({ dataDir }))
            return yield* Effect.exit(Effect.scoped(Effect.provide(ping, PgliteStoreLive({ dataDir }))))
          })
        )
        expect(second).toEqual(Exit.fail(new DataDirInUse({ dataDir, pid: process.pid })))
        expect(existsSync(lockOf(dataDir))).toBe(false)
      }).pipe(Effect.scoped),
    60_000
  )
})

const isRoot = process.getuid?.() === 0
/** A uid that is not this process's (root's): only root can give a file to it. */
const OTHER_UID = 1000
const rootOnly = "root only, to give a file to another uid: skipped otherwise"

const modeOf = (path: string) => Effect.promise(() => stat(path)).pipe(Effect.map((stats) => stats.mode & 0o777))
const entriesOf = (dir: string) => Effect.promise(() => readdir(dir)).pipe(Effect.map((names) => names.sort()))
const refusal = (dataDir: string, reason: string) => ({ _tag: "DataDirRefused", dataDir, reason })

describe("holdDataDir refuses a directory it must not take, and leaves it as it was", () => {
  it.live("a directory that is not empty and holds no database (no PG_VERSION): a project, a home", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* Effect.promise(() => chmod(dir, 0o755))
      yield* Effect.promise(() => writeFile(join(dir, "README.md"), "# a project\n"))
      const reason =
        "is not empty (1 entry) and holds no database (no PG_VERSION): initdb refuses such a directory too; " +
        "choose a new or empty directory"
      const error = yield* Effect.flip(Effect.scoped(holdDataDir(dir)))
      expect(error).toMatchObject(refusal(dir, reason))
      expect(error.message).toBe(`the data directory ${dir} ${reason}`)
      expect(yield* entriesOf(dir)).toEqual(["README.md"])
      expect(yield* modeOf(dir)).toBe(0o755)
    }).pipe(Effect.scoped)
  )

  it.live("takes an empty directory, one holding only a lock file left by a crash, and a database", () =>
    Effect.gen(function* () {
      const empty = yield* tempDir
      yield* holdOnce(empty)
      const onlyLock = yield* tempDir
      yield* writeLock(onlyLock, `${yield* deadPid}\n`)
      yield* holdOnce(onlyLock)
      const database = yield* tempDir
      yield* Effect.promise(() => writeFile(join(database, "PG_VERSION"), "17\n"))
      yield* Effect.promise(() => mkdir(join(database, "base")))
      yield* holdOnce(database)
    }).pipe(Effect.scoped)
  )

  it.live("follows a symbolic link of its own, and holds and returns the directory it leads to", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const target = join(dir, "on-another-disk")
      const link = join(dir, "data")
      yield* Effect.promise(() => mkdir(target))
      yield* Effect.promise(() => symlink(target, link))
      const held = yield* Effect.scoped(
        Effect.gen(function* () {
          const path = yield* holdDataDir(link)
          expect(yield* readLock(target)).toBe(`${process.pid}\n`)
          return path
        })
      )
      expect(held).toBe(yield* Effect.promise(() => realpath(target)))
    }).pipe(Effect.scoped)
  )

  it.live.skipIf(!isRoot)(`a directory owned by another user, as PostgreSQL refuses one (${rootOnly})`, () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* Effect.promise(() => chmod(dir, 0o755))
      yield* Effect.promise(() => chown(dir, OTHER_UID, OTHER_UID))
      expect(yield* Effect.flip(Effect.scoped(holdDataDir(dir)))).toMatchObject(
        refusal(
          dir,
          `is owned by uid ${OTHER_UID}, not by this process (uid 0): PostgreSQL refuses such a directory too; ` +
            "chown it or choose another"
        )
      )
      expect(yield* modeOf(dir)).toBe(0o755)
      expect(yield* entriesOf(dir)).toEqual([])
    }).pipe(Effect.scoped)
  )

  it.live.skipIf(!isRoot)(
    `a database holding a file of another user, named without its control characters (${rootOnly})`,
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        yield* Effect.promise(() => writeFile(join(dir, "PG_VERSION"), "17\n"))
        yield* Effect.promise(() => mkdir(join(dir, "base", "5"), { recursive: true }))
        const planted = join(dir, "base", "5", "16385\u001b[2J")
        yield* Effect.promise(() => writeFile(planted, ""))
        yield* Effect.promise(() => chown(planted, OTHER_UID, OTHER_UID))
        expect(yield* Effect.flip(Effect.scoped(holdDataDir(dir)))).toMatchObject(
          refusal(
            dir,
            `holds base/5/16385\\x1b[2J, owned by uid ${OTHER_UID}, not by this process (uid 0): its owner can read ` +
              "and change the database through it; chown -R the directory or choose another"
          )
        )
        expect(existsSync(lockOf(dir))).toBe(false)
      }).pipe(Effect.scoped)
  )

  it.live.skipIf(!isRoot)(
    `a symbolic link owned by another user, who could point it elsewhere, or to such a directory (${rootOnly})`,
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const ours = join(dir, "ours")
        const theirs = join(dir, "theirs")
        yield* Effect.promise(() => mkdir(ours))
        yield* Effect.promise(() => mkdir(theirs))
        yield* Effect.promise(() => chown(theirs, OTHER_UID, OTHER_UID))
        const theirLink = join(dir, "their-link")
        yield* Effect.promise(() => symlink(ours, theirLink))
        yield* Effect.promise(() => lchown(theirLink, OTHER_UID, OTHER_UID))
        expect(yield* Effect.flip(Effect.scoped(holdDataDir(theirLink)))).toMatchObject(
          refusal(
            theirLink,
            `is a symbolic link owned by uid ${OTHER_UID}, not by this process (uid 0) or root: its owner can point ` +
              "it anywhere; give the directory itself, or a link of your own"
          )
        )
        const ourLink = join(dir, "our-link")
        yield* Effect.promise(() => symlink(theirs, ourLink))
        expect(yield* Effect.flip(Effect.scoped(holdDataDir(ourLink)))).toMatchObject({
          _tag: "DataDirRefused",
          reason: expect.stringMatching(new RegExp(`^is owned by uid ${OTHER_UID}, `))
        })
        expect(yield* entriesOf(ours)).toEqual([])
        expect(yield* entriesOf(theirs)).toEqual([])
      }).pipe(Effect.scoped)
  )
})
