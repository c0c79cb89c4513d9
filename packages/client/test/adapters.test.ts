import { describeClient } from "./suite.js"
import { adapters, inProcess, overPort } from "./servers.js"

// The same suite against every adapter's standalone server over a real port, and through the fetch handler in process.
for (const [name, start] of adapters) describeClient(`${name} over a port`, overPort(start))
describeClient("the fetch handler in process", inProcess)
