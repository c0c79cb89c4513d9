import { execFileSync, spawnSync } from "node:child_process"
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/**
 * Why this process cannot mount a tmpfs (it takes root and the right to mount: a privileged container, a CI runner),
 * or undefined when it can: tried once with a 1 MiB tmpfs, for a test to skip saying why.
 */
export const tmpfsUnavailable = (): string | undefined => {
  if (process.platform !== "linux") return "not Linux"
  if (process.getuid?.() !== 0) return "not root"
  const point = mkdtempSync(join(tmpdir(), "accord-tmpfs-probe-"))
  try {
    const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", point], { encoding: "utf8" })
    if (mounted.status !== 0) return `mount -t tmpfs failed: ${mounted.stderr.trim() || String(mounted.error)}`
    spawnSync("umount", [point])
    return undefined
  } finally {
    rmSync(point, { recursive: true, force: true })
  }
}

/** A small file system of its own, to fill up: `unmount()` detaches it (lazily: a process may still hold a file). */
export interface Tmpfs {
  readonly path: string
  readonly unmount: () => void
}

/** Mounts a tmpfs of `size` (`mount -o size=`, e.g. `96m`), private to its owner, on a new temporary directory. */
export const mountTmpfs = (size: string): Tmpfs => {
  const path = mkdtempSync(join(tmpdir(), "accord-tmpfs-"))
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", path])
  return {
    path,
    unmount: () => {
      spawnSync("umount", ["-l", path])
      rmSync(path, { recursive: true, force: true })
    }
  }
}

/**
 * Fills the file system `file` is on, as another program would, by writing `file` until `leaveBytes` are left free
 * (0: to its last block, until ENOSPC).
 */
export const fillFileSystem = (file: string, leaveBytes = 0): void => {
  const chunk = Buffer.alloc(1024 * 1024)
  const fd = openSync(file, "w")
  try {
    const { bavail, bsize } = statfsSync(file)
    let toWrite = bavail * bsize - leaveBytes
    for (let size = chunk.length; size >= 512 && toWrite > 0;) {
      try {
        toWrite -= writeSync(fd, chunk, 0, Math.min(size, toWrite))
      } catch (error) {
        if (!(error instanceof Error && "code" in error && error.code === "ENOSPC")) throw error
        size = Math.floor(size / 2)
      }
    }
  } finally {
    closeSync(fd)
  }
}
