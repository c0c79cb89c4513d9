// orval's mutator (orval.config.ts): the generated functions call it with the operation's path and a RequestInit.
// It adds the server's base URL, which the document leaves relative (`/api`), and returns orval's
// `{ data, status, headers }` answer shape, the body parsed as JSON when there is one.

/** Where the generated functions send their requests: set once before calling them. */
export const orvalServer = { baseUrl: "" }

export const orvalFetch = async <T>(path: string, init: RequestInit): Promise<T> => {
  const response = await fetch(`${orvalServer.baseUrl}${path}`, init)
  const text = await response.text()
  const data: unknown = text === "" ? undefined : JSON.parse(text)
  // orval types T as the union of the operation's `{ data, status, headers }` answers; this is one of them.
  return { data, status: response.status, headers: response.headers } as T
}
