import { makeEagerHttpHandler, type AccordRuntime, type HttpResponse } from "@accord/core"
import { NodeHttpRequest, type NodeRelay } from "@accord/node/bridge"
import { serve } from "@accord/node/server"
import { ScryptPasswordHasherLive } from "@accord/node/scrypt"
import { parseConfig, startAccord } from "@accord/server"
import { makeMemoryStore } from "@accord/store-memory"
import { getRequestListener, serve as honoServe, type Http2Bindings, type HttpBindings } from "@hono/node-server"
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response"
import { Layer, ManagedRuntime } from "effect"
import express from "express"
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify"
import { Hono } from "hono"
import Koa from "koa"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, IncomingMessage, type RequestListener, type Server, type ServerResponse } from "node:http"
import { connect, type AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Readable } from "node:stream"
import {
  authenticate,
  isJsonContentType,
  makeBareStore,
  updatePreferences,
  type BareResponse,
  type BareStore
} from "./bare-domain.js"
import { BODY_LIMIT, listeningServer, readJsonBody, startBareFastify, startBareKoa } from "./bare-servers.js"
import { benchHeaders, decodeSeed, LANGUAGE_PATH, scenarios, seedInput } from "./fixtures.js"
import type { ChildMessage, StageFramework, StageResult, StageServer } from "./protocol.js"

/**
 * The request path stage by stage (issue 37), in one process: each row is a real server on loopback, driven by a
 * client in the same process (raw sockets, keep-alive, `STAGE_CONNECTIONS` at once), that does one stage more than
 * the row before it and then writes the same canned answer with Node's `writeHead` + `end`, until the row that writes
 * its own. CPU per request is this process's (server and client: the client's part is the same in every row, and is
 * in the `node` floor). The stages: the framework taking the request to its handler (adapter in), the Node bridge's
 * request (bridge), the body taken (body), the core's checks, decoding, use case and encoding (core), the answer
 * written (write), and the access log (log); the bare frameworks' rows do the same work by hand (bare-domain.ts).
 * Rows are measured in rounds, in one order in odd rounds and the reverse in even ones.
 */

const users = Number(process.env["BENCH_USERS"] ?? 1000)
const requestsPerRun = Number(process.env["BENCH_STAGE_REQUESTS"] ?? 4000)
const rounds = Number(process.env["BENCH_STAGE_ROUNDS"] ?? 5)
const connections = Number(process.env["BENCH_STAGE_CONNECTIONS"] ?? 10)
const frameworks = (process.env["BENCH_STAGE_FRAMEWORKS"] ?? "fastify,koa,express,fetch").split(",") as Array<
  StageFramework | "node"
>

interface Started {
  readonly port: number
  readonly close: () => Promise<void>
}

interface Row {
  readonly framework: StageFramework | "node"
  readonly server: StageServer
  readonly stage: string
  readonly start: () => Promise<Started>
}

const portOf = (url: string): number => Number(new URL(url).port)

/** The answer every row that does not write its own writes: an Accord PUT language answer's bytes. */
const CANNED_BODY =
  '{"id":1,"language":"en-US","timezone":60,"mfa_enabled":true,"created_at":"2026-11-28T00:00:00.000Z",' +
  '"updated_at":"2026-11-28T00:00:00.000Z"}'
const CANNED_HEAD = [
  "content-type",
  "application/json; charset=utf-8",
  "cache-control",
  "no-store",
  "x-content-type-options",
  "nosniff",
  "x-request-id",
  "00000000-0000-4000-8000-000000000000",
  "etag",
  '"0123456789abcdef-8c"',
  "content-length",
  String(Buffer.byteLength(CANNED_BODY))
]
const writeCanned = (response: ServerResponse): void => {
  response.writeHead(200, CANNED_HEAD)
  response.end(CANNED_BODY)
}

// ---- the client

const requestBytes = (scenario = scenarios[0]): ReadonlyArray<Buffer> =>
  (scenario?.requests ?? []).map((request) =>
    Buffer.from(
      `PUT ${request.path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${benchHeaders.authorization}\r\n` +
        `content-type: ${benchHeaders["content-type"]}\r\ncontent-length: ${Buffer.byteLength(request.body)}\r\n\r\n` +
        request.body
    )
  )
const REQUESTS = requestBytes()

/** Sends `count` requests over `connections` keep-alive connections, each waiting for its answer; every one a 200. */
const drive = (port: number, count: number): Promise<void> =>
  new Promise((resolve, reject) => {
    let sent = 0
    let answered = 0
    let open = 0
    const one = (): void => {
      const socket = connect(port, "127.0.0.1")
      socket.setNoDelay(true)
      open++
      let pending: Buffer = Buffer.alloc(0)
      let turn = 0
      const send = (): void => {
        if (sent >= count) {
          socket.end()
          return
        }
        sent++
        socket.write(REQUESTS[turn++ & 1] ?? Buffer.alloc(0))
      }
      socket.on("data", (chunk: Buffer) => {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
        for (;;) {
          const headEnd = pending.indexOf("\r\n\r\n")
          if (headEnd === -1) return
          const head = pending.subarray(0, headEnd).toString("latin1")
          const length = Number(/\r\ncontent-length: *([0-9]+)/i.exec(head)?.[1] ?? 0)
          if (pending.length < headEnd + 4 + length) return
          if (!head.startsWith("HTTP/1.1 200")) {
            socket.destroy()
            reject(new Error(`a stage row answered ${head.split("\r\n")[0] ?? ""}`))
            return
          }
          pending = pending.subarray(headEnd + 4 + length)
          answered++
          if (answered === count) resolve()
          send()
        }
      })
      socket.on("error", reject)
      socket.on("close", () => open--)
      socket.on("connect", send)
    }
    for (let index = 0; index < Math.min(connections, count); index++) one()
  })

// ---- the servers

const runtimeOf = async (): Promise<AccordRuntime> => {
  const runtime: AccordRuntime = ManagedRuntime.make(
    Layer.merge(makeMemoryStore(decodeSeed(seedInput(users))), ScryptPasswordHasherLive())
  )
  await runtime.context()
  return runtime
}

/** A framework in front of `relay`, as its standalone Accord server has it (`serve`: the guard and the drain too). */
const accordFramework = async (framework: StageFramework, relay: NodeRelay, runtime: AccordRuntime) => {
  const options = { runtime, host: "127.0.0.1", port: 0 }
  if (framework === "fastify")
    return serve(options, async (_handlerOptions, server) => {
      let listener: RequestListener | undefined
      const app = Fastify({
        logger: false,
        serverFactory: (fastifyListener) => {
          listener = fastifyListener
          return server
        }
      })
      app.removeAllContentTypeParsers()
      app.addContentTypeParser("*", (_request, payload, done) => done(null, payload))
      const toCore = (request: FastifyRequest, reply: FastifyReply): void => {
        reply.hijack()
        relay(request.raw, reply.raw, request.body instanceof Readable ? request.body : request.raw)
      }
      app.route({ method: app.supportedMethods, url: "/*", exposeHeadRoute: false, handler: toCore })
      await app.ready()
      if (listener === undefined) throw new Error("no listener")
      return { listener, close: () => app.close() }
    })
  if (framework === "koa")
    return serve(options, () => {
      const app = new Koa()
      app.use((ctx) => {
        ctx.respond = false
        relay(ctx.req, ctx.res)
      })
      return app.callback()
    })
  if (framework === "express")
    return serve(options, () => {
      const app = express()
      app.disable("x-powered-by")
      app.use((req: IncomingMessage, res: ServerResponse) => relay(req, res))
      return app
    })
  return serve(options, () => {
    const listener = getRequestListener(
      (_request, env: HttpBindings | Http2Bindings) => {
        if (!(env.incoming instanceof IncomingMessage)) throw new Error("not node:http")
        relay(env.incoming, env.outgoing as ServerResponse)
        return RESPONSE_ALREADY_SENT
      },
      { overrideGlobalObjects: false, autoCleanupIncoming: false }
    )
    return (incoming, outgoing) => void listener(incoming, outgoing)
  })
}

const started = async (running: { url: string; close: () => Promise<void> }): Promise<Started> => ({
  port: portOf(running.url),
  close: running.close
})

/** Accord's rows for a framework: each relay does one stage more, then writes the canned answer. */
const accordRows = (framework: StageFramework, runtime: () => Promise<AccordRuntime>, seedFile: string) => {
  const row = (stage: string, relay: (runtime: AccordRuntime) => NodeRelay): Row => ({
    framework,
    server: "accord",
    stage,
    start: async () => {
      const rt = await runtime()
      return started(await accordFramework(framework, relay(rt), rt))
    }
  })
  const deferred =
    (then: (request: NodeHttpRequest, response: ServerResponse, runtime: AccordRuntime) => void) =>
    (rt: AccordRuntime): NodeRelay =>
    (request, response, body = request) =>
      queueMicrotask(() => then(new NodeHttpRequest(request, body, response), response, rt))
  const core = (rt: AccordRuntime): NodeRelay => {
    const handler = makeEagerHttpHandler({ runtime: rt })
    const done = (response: ServerResponse) => (answer: HttpResponse) => {
      if (answer.status !== 200) throw new Error(`the core answered ${answer.status}`)
      writeCanned(response)
    }
    return (request, response, body = request) =>
      queueMicrotask(() => {
        const answer = handler(new NodeHttpRequest(request, body, response))
        if (answer instanceof Promise) void answer.then(done(response))
        else done(response)(answer)
      })
  }
  const cli = (logLevel: "info" | "warn"): Row => ({
    framework,
    server: "accord",
    stage: logLevel === "warn" ? "write" : "log",
    start: async () => {
      const parsed = parseConfig(
        ["--adapter", framework, "--port", "0", "--seed", seedFile, "--log-level", logLevel],
        {}
      )
      if (parsed._tag !== "Run") throw new Error("the CLI's configuration did not parse")
      return started(await startAccord(parsed.config))
    }
  })
  return [
    row("adapter in", () => (_request, response) => writeCanned(response)),
    row(
      "bridge",
      deferred((_request, response) => writeCanned(response))
    ),
    row(
      "body",
      deferred((request, response) => {
        if (request.readBodyNow(BODY_LIMIT) === undefined) throw new Error("the body had not arrived")
        writeCanned(response)
      })
    ),
    row("core", core),
    cli("warn"),
    cli("info")
  ]
}

/** The bare framework's rows: its routing, then its body parsing, then bare-domain's work, then its own writing. */
const bareRows = (framework: StageFramework): ReadonlyArray<Row> => {
  const store = (): BareStore => makeBareStore(users)
  const work = (bare: BareStore, authorization: string | undefined, body: unknown): BareResponse => {
    const user = authenticate(bare, authorization)
    if (user === undefined) throw new Error("bare: unauthenticated")
    return updatePreferences(bare, user, body)
  }
  const row = (stage: string, start: () => Promise<Started>): Row => ({ framework, server: "bare", stage, start })
  const listen = async (listener: RequestListener): Promise<Started> => {
    const server = createServer(listener).listen(0, "127.0.0.1")
    return started(await listeningServer(server))
  }
  if (framework === "fastify") {
    const fastify = async (parse: boolean, withWork: boolean): Promise<Started> => {
      const bare = store()
      const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT })
      if (!parse) {
        app.removeAllContentTypeParsers()
        app.addContentTypeParser("*", (_request, payload, done) => done(null, payload))
      }
      app.put(LANGUAGE_PATH, (request, reply) => {
        if (withWork) work(bare, request.headers.authorization, request.body)
        reply.hijack()
        writeCanned(reply.raw)
      })
      await app.listen({ host: "127.0.0.1", port: 0 })
      return { port: (app.server.address() as AddressInfo).port, close: () => app.close() }
    }
    return [
      row("adapter in", () => fastify(false, false)),
      row("body", () => fastify(true, false)),
      row("core", () => fastify(true, true)),
      row("write", async () => started(await startBareFastify(store()))),
      {
        framework,
        server: "ts-rest",
        stage: "write",
        start: async () => started(await (await import("./peer-tsrest.js")).startTsRestFastify(store()))
      }
    ]
  }
  if (framework === "koa") {
    const koa = async (parse: boolean, withWork: boolean): Promise<Started> => {
      const bare = store()
      const app = new Koa()
      app.use(async (ctx) => {
        if (ctx.path !== LANGUAGE_PATH) return
        const authorization = ctx.get("authorization") || undefined
        if (parse) {
          const read = await readJsonBody(ctx.get("content-type") || undefined, () => readText(ctx.req))
          if (!read.ok) throw new Error("bare koa: body refused")
          if (withWork) work(bare, authorization, read.body)
        }
        ctx.respond = false
        writeCanned(ctx.res)
      })
      return listen(app.callback())
    }
    return [
      row("adapter in", () => koa(false, false)),
      row("body", () => koa(true, false)),
      row("core", () => koa(true, true)),
      row("write", async () => started(await startBareKoa(store())))
    ]
  }
  if (framework === "express") {
    const expressRow = async (parse: boolean, withWork: boolean): Promise<Started> => {
      const bare = store()
      const app = express()
      app.disable("x-powered-by")
      app.set("etag", false)
      const json = express.json({ limit: BODY_LIMIT, strict: false })
      const handlers: Array<express.RequestHandler> = parse ? [json] : []
      app.put(LANGUAGE_PATH, ...handlers, (req: express.Request, res: express.Response) => {
        if (withWork) {
          if (!isJsonContentType(req.get("content-type"))) throw new Error("bare express: not JSON")
          work(bare, req.get("authorization"), req.body)
        }
        writeCanned(res)
      })
      return started(await listeningServer(app.listen(0, "127.0.0.1")))
    }
    return [
      row("adapter in", () => expressRow(false, false)),
      row("body", () => expressRow(true, false)),
      row("core", () => expressRow(true, true)),
      row("write", async () => started(await (await import("./bare-express.js")).startBareExpress(store())))
    ]
  }
  const hono = async (parse: boolean, withWork: boolean): Promise<Started> => {
    const bare = store()
    const app = new Hono()
    app.put(LANGUAGE_PATH, async (c) => {
      if (parse) {
        const read = await readJsonBody(c.req.header("content-type"), () => c.req.text())
        if (!read.ok) throw new Error("bare hono: body refused")
        if (withWork) work(bare, c.req.header("authorization"), read.body)
      }
      return new Response(CANNED_BODY, { status: 200, headers: Object.fromEntries(pairs(CANNED_HEAD.slice(0, -2))) })
    })
    return started(await listeningServer(honoServe({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }) as Server))
  }
  return [
    row("adapter in", () => hono(false, false)),
    row("body", () => hono(true, false)),
    row("core", () => hono(true, true)),
    row("write", async () => started(await (await import("./bare-hono.js")).startBareHono(store())))
  ]
}

const pairs = (flat: ReadonlyArray<string>): Array<[string, string]> => {
  const result: Array<[string, string]> = []
  for (let index = 0; index + 1 < flat.length; index += 2) result.push([flat[index] ?? "", flat[index + 1] ?? ""])
  return result
}

const readText = (request: IncomingMessage): Promise<string | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.once("error", reject)
  })

// ---- the run

const cpuMicros = (): number => {
  const usage = process.cpuUsage()
  return usage.user + usage.system
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}

/** `framework/server/stage`, as `BENCH_STAGE_ONLY` names a row. */
const rowName = (row: Pick<Row, "framework" | "server" | "stage">): string =>
  `${row.framework}/${row.server}/${row.stage}`

/** One line from the parent (stage-instructions.ts), on stdin. */
const nextLine = (): Promise<string> =>
  new Promise((resolve) => {
    process.stdin.setEncoding("utf8")
    process.stdin.once("data", (chunk: string) => resolve(chunk.trim()))
  })

const main = async (): Promise<void> => {
  const workDir = mkdtempSync(join(tmpdir(), "accord-stages-"))
  const seedFile = join(workDir, "seed.json")
  writeFileSync(seedFile, JSON.stringify(seedInput(users)))
  let shared: Promise<AccordRuntime> | undefined
  const runtime = () => (shared ??= runtimeOf())
  const only = process.env["BENCH_STAGE_ONLY"]
  const floor: Row = {
    framework: "node",
    server: "node",
    stage: "floor",
    start: async () =>
      started(await listeningServer(createServer((_request, response) => writeCanned(response)).listen(0, "127.0.0.1")))
  }
  const rows: Array<Row> = [
    floor,
    ...frameworks
      .filter((framework): framework is StageFramework => framework !== "node")
      .flatMap((framework) => [...accordRows(framework, runtime, seedFile), ...bareRows(framework)])
  ].filter((row) => only === undefined || rowName(row) === only)
  if (rows.length === 0) throw new Error(`no stage row ${only ?? ""}`)
  const servers: Array<Started> = []
  for (const row of rows) servers.push(await row.start())
  // Warm-up: long enough for V8 to optimise every row's path.
  for (const server of servers) await drive(server.port, requestsPerRun * 2)
  if (only !== undefined && process.env["BENCH_STAGE_HANDSHAKE"] === "1") {
    // Under callgrind (stage-instructions.ts): the parent zeroes the counts, the requests run, the parent dumps them.
    const [server] = servers
    if (server === undefined) throw new Error("no server")
    process.stdout.write("warm\n")
    await nextLine()
    await drive(server.port, requestsPerRun)
    process.stdout.write("done\n")
    await nextLine()
    process.exit(0)
  }
  const samples: Array<Array<number>> = rows.map(() => [])
  for (let round = 1; round <= rounds; round++) {
    const order = rows.map((_row, index) => index)
    if (round % 2 === 0) order.reverse()
    for (const index of order) {
      const server = servers[index]
      if (server === undefined) continue
      const before = cpuMicros()
      await drive(server.port, requestsPerRun)
      samples[index]?.push((cpuMicros() - before) / requestsPerRun)
    }
  }
  const results: Array<StageResult> = rows.map((row, index) => ({
    framework: row.framework,
    server: row.server,
    stage: row.stage,
    cpuMicrosPerRequest: median(samples[index] ?? [])
  }))
  await Promise.all(servers.map((server) => server.close()))
  rmSync(workDir, { recursive: true, force: true })
  if (process.send === undefined) {
    console.log(JSON.stringify(results))
    process.exit(0)
  }
  const message: ChildMessage = { type: "stages", results, requestsPerRun, rounds, connections }
  process.send(message, () => process.exit(0))
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
