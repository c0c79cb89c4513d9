/**
 * The oldest Node.js Accord's packages run on: effect 4 needs 22.19 (every package.json's `engines`). On an older
 * one a command would fail later, obscurely, or not at all.
 */
export const MINIMUM_NODE = { major: 22, minor: 19 } as const

/**
 * Stops `command` with one line on stderr and exit 2 when this Node.js is older than MINIMUM_NODE. It imports
 * nothing, so an entry point calls it before loading anything that needs the newer Node.js (README, "Deploying").
 */
export const requireSupportedNode = (command: string): void => {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number)
  if (major < MINIMUM_NODE.major || (major === MINIMUM_NODE.major && minor < MINIMUM_NODE.minor)) {
    process.stderr.write(
      `${command}: Node.js ${MINIMUM_NODE.major}.${MINIMUM_NODE.minor} or newer is required; this is ${process.version}\n`
    )
    process.exit(2)
  }
}
