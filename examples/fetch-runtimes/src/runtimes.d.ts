// The few Bun and Deno APIs the hosts use, so that `tsc -p tsconfig.test.json` checks them under Node's types
// (Bun and Deno run the files with their own, complete ones). Shapes as documented by each runtime.

declare namespace Bun {
  interface Server {
    readonly url: URL
    readonly port: number
    /** Stops accepting; resolves once the requests in flight are answered (`stop(true)` cuts them instead). */
    stop(closeActiveConnections?: boolean): Promise<void>
  }
  interface ServeOptions {
    readonly hostname?: string
    readonly port?: number
    readonly maxRequestBodySize?: number
    /** Seconds a connection may stay silent before Bun closes it (10 by default, at most 255, 0 for never). */
    readonly idleTimeout?: number
    readonly fetch: (request: Request) => Response | Promise<Response>
  }
  function serve(options: ServeOptions): Server
}

declare namespace Deno {
  interface HttpServer {
    readonly finished: Promise<void>
    /** Stops accepting; resolves once the requests in flight are answered. */
    shutdown(): Promise<void>
  }
  interface ServeOptions {
    readonly hostname?: string
    readonly port?: number
    readonly onListen?: (address: { readonly hostname: string; readonly port: number }) => void
  }
  function serve(options: ServeOptions, handler: (request: Request) => Response | Promise<Response>): HttpServer
  const env: { get(name: string): string | undefined }
  function addSignalListener(signal: "SIGTERM" | "SIGINT", handler: () => void): void
  function exit(code?: number): never
}
