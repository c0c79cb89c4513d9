import { startKoaServer } from "@accord/adapter-koa"
import { runHttpConformance, startWith } from "@accord/conformance"

// The contract's black-box suite against the standalone Koa server on a fresh memory store.
runHttpConformance("koa", startWith(startKoaServer))
