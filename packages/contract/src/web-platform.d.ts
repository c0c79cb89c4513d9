/**
 * The web-platform globals the contract uses beyond ECMAScript, declared as narrowly as it uses them (as the domain's):
 * every runtime Accord runs on (Node, Bun, Deno, workerd, browsers) has them.
 */

/** Decodes base64 to a binary string (`webhookKeyOf`). */
declare function atob(data: string): string
