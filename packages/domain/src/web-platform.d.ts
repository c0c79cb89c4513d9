/**
 * The web-platform globals the domain uses beyond ECMAScript, declared as narrowly as it uses them (as core's): every
 * runtime Accord runs on (Node, Bun, Deno, workerd, browsers) has them.
 */

/** `crypto.randomUUID()`: the random part of an event id (`newEventId`). */
declare const crypto: { randomUUID(): string }
