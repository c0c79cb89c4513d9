import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync
} from "node:fs"
import { join } from "node:path"
import { Data, Effect, type Scope } from "effect"

/**
 * The lock file a process holds in a PGlite data directory for as long as it has the database open. PGlite keeps no
 * lock of its own (two processes open one directory and both write, each blind to the other's pages), so two writers
 * would corrupt it.
 */
export const DATA_DIR_LOCK_FILE = "accord.lock"

/** The data directory's permissions: its owner's alone (rwx------). */
const PRIVATE = 0o700

/** Another live process (or this one, through another layer) has the data directory open. */
export class DataDirInUse extends Data.TaggedError("DataDirInUse")<{
  readonly dataDir: string
  readonly pid: number
}> {
  override get message(): string {
    return (
      `the data directory ${this.dataDir} is in use by process ${this.pid}: one process at a time owns it ` +
      `(if no such process runs, remove ${join(this.dataDir, DATA_DIR_LOCK_FILE)})`
    )
  }
}

/**
 * The data directory is not one this process may take: owned by another user, or not empty and not a database
 * (docs/SECURITY.md, items 34 and 35). The operator's to sort out, as PostgreSQL and initdb leave it to them.
 */
export class DataDirRefused extends Data.TaggedError("DataDirRefused")<{
  readonly dataDir: string
  readonly reason: string
}> {
  override get message(): string {
    return `the data directory ${this.dataDir} ${this.reason}`
  }
}

/** The data directory cannot be created, locked or opened (permissions, not a directory, not a PGlite database). */
export class DataDirUnusable extends Data.TaggedError("DataDirUnusable")<{
  readonly dataDir: string
  readonly reason: string
}> {
  override get message(): string {
    return `cannot use the data directory ${this.dataDir}: ${this.reason}`
  }
}

export type DataDirError = DataDirInUse | DataDirRefused | DataDirUnusable

/** A synchronous file operation, its thrown error kept as it is (its message names the path and the errno). */
const attempt = <A>(operation: () => A): Effect.Effect<A, unknown> =>
  Effect.try({ try: operation, catch: (cause) => cause })

export const reasonOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const errorCode = (error: unknown): string | undefined =>
  error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : undefined

/** A pid as this module writes it: digits and a newline; anything else (a file cut short by a crash) is undefined. */
const PID_CONTENT = /^([1-9][0-9]{0,9})\n$/

/** The pid a lock file names; undefined when it is unreadable garbage, "gone" when it no longer exists. */
const readHolder = (lockFile: string): number | undefined | "gone" => {
  let content: string
  try {
    content = readFileSync(lockFile, { encoding: "utf8", flag: "r" }).slice(0, 16)
  } catch (error) {
    if (errorCode(error) === "ENOENT") return "gone"
    throw error
  }
  const match = PID_CONTENT.exec(content)
  return match?.[1] === undefined ? undefined : Number(match[1])
}

/**
 * Whether a killed process is still listed only because its parent has not reaped it yet (Linux's /proc; elsewhere
 * false). It still answers `kill(pid, 0)`, and an init that reaps late can keep it a while after a `kill -9`.
 */
const isZombie = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // The state follows the command's name, in parentheses that may hold spaces and parentheses of their own.
    const state = stat.charAt(stat.lastIndexOf(")") + 2)
    return state === "Z" || state === "X"
  } catch {
    return false
  }
}

/** Whether a process with this pid runs on this machine (EPERM: it does, as another user). */
const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch (error) {
    if (errorCode(error) !== "EPERM") return false
  }
  return !isZombie(pid)
}

/** The directories this process holds: its own pid in a lock file must not read as stale while it holds it. */
const heldHere = new Set<string>()

/**
 * Takes the lock file, or names its live holder. A lock naming a process that no longer runs (`kill -9`, a power
 * cut), or that is dead but not yet reaped, is stale and taken over, so a crash never locks the directory for ever. Its own pid counts as stale too unless
 * this process holds the directory (`heldHere`): a container restarted on the same volume often gets the same pid.
 * Taking a stale lock over is a rename, then a check that the file moved aside is the stale one: when two processes
 * race for a stale lock, one may move the other's fresh lock aside, and then puts it back and tries again.
 */
const takeLock = (lockFile: string): Effect.Effect<number | undefined, unknown> =>
  Effect.gen(function* () {
    const own = `${process.pid}\n`
    for (let round = 0; round < 10; round++) {
      const created = yield* attempt(() => {
        try {
          writeFileSync(lockFile, own, { flag: "wx" })
          return true
        } catch (error) {
          if (errorCode(error) === "EEXIST") return false
          throw error
        }
      })
      if (created) return undefined
      const holder = yield* attempt(() => readHolder(lockFile))
      if (holder === "gone") continue
      if (holder === undefined && round < 5) {
        // Created an instant ago and not yet written, or cut short by a crash: wait a little, then call it stale.
        yield* Effect.sleep("20 millis")
        continue
      }
      if (holder !== undefined && holder !== process.pid && isRunning(holder)) return holder
      yield* attempt(() => {
        const aside = `${lockFile}.stale-${process.pid}`
        try {
          renameSync(lockFile, aside)
        } catch (error) {
          if (errorCode(error) === "ENOENT") return
          throw error
        }
        const moved = readHolder(aside)
        if (moved !== holder && typeof moved === "number" && isRunning(moved)) {
          // Another process's fresh lock, not the stale one: back where it was, unless a third took the place.
          try {
            writeFileSync(lockFile, `${moved}\n`, { flag: "wx" })
          } catch {
            // The third holds it now: the next attempt sees it.
          }
        }
        unlinkSync(aside)
      })
    }
    return yield* Effect.fail(new Error(`${lockFile} keeps changing`))
  })

/** The file that makes a directory a PostgreSQL database, so one PGlite opens: initdb writes it first. */
const DATABASE_MARKER = "PG_VERSION"

/** Whether the directory at `path` holds a database already (false: missing, or PGlite's first start makes one). */
export const holdsDatabase = (path: string): boolean => existsSync(join(path, DATABASE_MARKER))

/** This process's user as PostgreSQL compares it (the effective uid); undefined where there is none (Windows). */
const ownUid = (): number | undefined => process.geteuid?.()

/** A path read from the file system, shown without control characters: the line reaches a terminal. */
const printable = (path: string): string =>
  // eslint-disable-next-line no-control-regex -- the control characters are what it replaces
  path.replace(/[\u0000-\u001f\u007f-\u009f]/g, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, "0")}`)

/** Whether an entry of the data directory is Accord's lock file, or one moved aside a moment ago (`takeLock`). */
const isLockFile = (name: string): boolean =>
  name === DATA_DIR_LOCK_FILE || name.startsWith(`${DATA_DIR_LOCK_FILE}.stale-`)

/**
 * Creates the data directory when missing and returns its real path, refusing one another user could control
 * (docs/SECURITY.md, item 34): PostgreSQL refuses a data directory it does not own, and so does this. A symbolic link
 * is followed, as PostgreSQL follows one (a data directory moved to another disk), but only when its owner is this
 * user or root (anyone else could point it elsewhere later), and everything after this runs on the real path, so the
 * checks and PGlite see the same directory even if the link changes meanwhile.
 */
const createOwned = (dataDir: string, own: number | undefined): string => {
  const link = (() => {
    try {
      return lstatSync(dataDir)
    } catch (error) {
      if (errorCode(error) === "ENOENT") return undefined
      throw error
    }
  })()
  if (own !== undefined && link?.isSymbolicLink() === true && link.uid !== own && link.uid !== 0) {
    throw new DataDirRefused({
      dataDir,
      reason:
        `is a symbolic link owned by uid ${link.uid}, not by this process (uid ${own}) or root: its owner can point ` +
        `it anywhere; give the directory itself, or a link of your own`
    })
  }
  mkdirSync(dataDir, { recursive: true, mode: PRIVATE })
  const real = realpathSync(dataDir)
  const { uid } = statSync(real)
  if (own !== undefined && uid !== own) {
    throw new DataDirRefused({
      dataDir,
      reason:
        `is owned by uid ${uid}, not by this process (uid ${own}): PostgreSQL refuses such a directory too; ` +
        `chown it or choose another`
    })
  }
  return real
}

/**
 * Refuses a directory that is neither empty (but for a lock file) nor a database, as initdb does (docs/SECURITY.md,
 * item 35): `--data-dir .` must not turn a project or a home into a database. One whose lock names another live
 * process is in use (that process may be initialising it).
 */
const refuseForeignContents = (dataDir: string, real: string): void => {
  const entries = readdirSync(real).filter((name) => !isLockFile(name))
  if (entries.length === 0 || entries.includes(DATABASE_MARKER)) return
  const holder = readHolder(join(real, DATA_DIR_LOCK_FILE))
  if (typeof holder === "number" && holder !== process.pid && isRunning(holder)) {
    throw new DataDirInUse({ dataDir, pid: holder })
  }
  throw new DataDirRefused({
    dataDir,
    reason:
      `is not empty (${entries.length} ${entries.length === 1 ? "entry" : "entries"}) and holds no database ` +
      `(no ${DATABASE_MARKER}): initdb refuses such a directory too; choose a new or empty directory`
  })
}

/**
 * Refuses a database holding a file or directory of another user (docs/SECURITY.md, item 34): whoever owns a file can
 * still read and write it through a link of their own, whatever the directory's mode. Symbolic links are checked, and
 * what they point to, but not followed further. Every entry once: a database has a few thousand at most.
 */
const refuseForeignEntries = (dataDir: string, real: string, own: number): void => {
  const pending = [""]
  for (let relative = pending.pop(); relative !== undefined; relative = pending.pop()) {
    for (const entry of readdirSync(join(real, relative), { withFileTypes: true })) {
      const path = join(relative, entry.name)
      const stats = lstatSync(join(real, path))
      const owner = stats.isSymbolicLink() ? ownerBehind(join(real, path), stats.uid, own) : stats.uid
      if (owner !== own) {
        throw new DataDirRefused({
          dataDir,
          reason:
            `holds ${printable(path)}, owned by uid ${owner}, not by this process (uid ${own}): its owner can ` +
            `read and change the database through it; chown -R the directory or choose another`
        })
      }
      if (stats.isDirectory()) pending.push(path)
    }
  }
}

/** A symbolic link's owner, or its target's when the link is this user's: the first that is not `own`. */
const ownerBehind = (path: string, linkOwner: number, own: number): number => {
  if (linkOwner !== own) return linkOwner
  try {
    return statSync(path).uid
  } catch {
    // Dangling: PGlite fails on it as it would without this check.
    return own
  }
}

/**
 * Creates the data directory when missing, checks that it may be taken (this user's, empty or a database, nothing in
 * it of another user's), makes it private to its owner (0700), and holds its lock file for the life of the scope:
 * `DataDirRefused` for a directory it must not take, `DataDirInUse` when a live process holds it already. Returns the
 * directory's real path, the one to open. On release the lock file is removed, unless it no longer names this process.
 */
export const holdDataDir = (dataDir: string): Effect.Effect<string, DataDirError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const own = ownUid()
      const key = yield* attempt(() => createOwned(dataDir, own))
      // Claimed here before the file is taken, in the same step as the check: two layers of this process never both
      // see the directory free.
      if (heldHere.has(key)) return yield* new DataDirInUse({ dataDir, pid: process.pid })
      heldHere.add(key)
      const holder = yield* Effect.gen(function* () {
        yield* attempt(() => {
          refuseForeignContents(dataDir, key)
          if (own !== undefined) refuseForeignEntries(dataDir, key, own)
          // PGlite writes its files readable and writable by everyone (0666, whatever the umask): the directory is
          // what keeps other users of the machine from reading the hashes or writing a credential in. PostgreSQL
          // itself refuses a data directory others can enter; this one is made private instead.
          const { mode } = statSync(key)
          if ((mode & 0o077) !== 0) chmodSync(key, mode & PRIVATE)
        })
        return yield* takeLock(join(key, DATA_DIR_LOCK_FILE))
      }).pipe(Effect.tapError(() => Effect.sync(() => heldHere.delete(key))))
      if (holder === undefined) return key
      heldHere.delete(key)
      return yield* new DataDirInUse({ dataDir, pid: holder })
    }).pipe(
      Effect.mapError((error) =>
        error instanceof DataDirInUse || error instanceof DataDirRefused
          ? error
          : new DataDirUnusable({ dataDir, reason: reasonOf(error) })
      )
    ),
    (key) =>
      Effect.sync(() => {
        heldHere.delete(key)
        const lockFile = join(key, DATA_DIR_LOCK_FILE)
        try {
          if (readHolder(lockFile) === process.pid) unlinkSync(lockFile)
        } catch {
          // Gone already, or unreadable: nothing of ours to remove.
        }
      })
  )
