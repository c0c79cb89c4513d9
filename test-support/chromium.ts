import { existsSync } from "node:fs"
import { chromium, type Browser } from "playwright-core"

/**
 * Debian's Chromium for the browser tests (`apt-get install chromium`; .ci/run installs it). ACCORD_CHROMIUM points
 * elsewhere, or at a missing file to see the skip.
 */
export const chromiumPath = process.env["ACCORD_CHROMIUM"] ?? "/usr/bin/chromium"

/** Why a browser test is skipped, or undefined when Chromium is there. */
export const chromiumSkipReason: string | undefined = existsSync(chromiumPath)
  ? undefined
  : `skipped: ${chromiumPath} is missing`

// This machine's network is closed: without these Chromium keeps trying to reach Google's services (updates, sync,
// QUIC probes) and its start slows down. `launch` gives every run a fresh temporary profile (user-data dir).
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

/** A headless Chromium, as every browser test starts it. */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS })
