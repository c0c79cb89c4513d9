import { makeAccordClient as makeValidatedClient } from "@accord/client/validated"
import { describeClient } from "./suite.js"
import { adapters, inProcess, overPort } from "./servers.js"

// The same suite against every adapter's standalone server over a real port, and through the fetch handler in process;
// the validated client (the same calls, every answer decoded with the Schemas) in process.
for (const [name, start] of adapters) describeClient(`${name} over a port`, overPort(start))
describeClient("the fetch handler in process", inProcess)
describeClient("the fetch handler in process, validated (@accord/client/validated)", inProcess, makeValidatedClient)
