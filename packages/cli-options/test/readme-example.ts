import { integer, nonEmpty, onOff, option, parseOptions, renderUsage } from "@accord/cli-options"
import { Result } from "effect"

const options = {
  host: option({
    group: "Listening",
    flag: "host",
    env: "HOST",
    type: nonEmpty("HOST"),
    default: "127.0.0.1",
    help: "address to listen on"
  }),
  port: option({
    group: "Listening",
    flag: "port",
    env: "PORT",
    type: integer(0, 65535, "PORT"),
    default: 3000,
    help: "port, `0` picks a free one"
  }),
  verbose: option({ group: "Output", flag: "verbose", env: "VERBOSE", type: onOff, default: false, help: "log more" }),
  seed: option({ group: "Output", env: "SEED_FILE", type: nonEmpty("FILE"), help: "JSON file loaded at start" })
}

// A flag wins over its variable; a value comes typed: string, number, boolean, string | undefined.
const parsed = parseOptions(options, ["--port=8080", "--verbose"], { HOST: "0.0.0.0", PORT: "9000" })
if (Result.isSuccess(parsed) && parsed.success._tag === "Values") {
  const { host, port, verbose, seed } = parsed.success.values
  console.log(host, port, verbose, seed) // 0.0.0.0 8080 true undefined
}

// Every bad value at once, one line each, naming the flag and its variable.
const bad = parseOptions(options, ["--port", "http"], { VERBOSE: "yes" })
if (Result.isFailure(bad)) console.log(bad.failure.message)
// --port (PORT) must be an integer from 0 to 65535, got "http"
// --verbose (VERBOSE) must be true or false, got "yes"

console.log(renderUsage(options, { head: "Usage: serve [options]" }))
