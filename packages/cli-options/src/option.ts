import type { OptionType } from "./option-type.js"

/** What an option says about itself: every use of the table (parser, usage, README) reads these fields alone. */
export interface OptionFields<out A> {
  /** The flag without its dashes (`port` for `--port`); absent: set through the environment only. */
  readonly flag?: string
  /** Its environment twin, read when the flag is absent; an empty variable counts as unset. */
  readonly env: string
  readonly type: OptionType<A>
  /** Names the value where the type's placeholder says too little (`PORT` for an integer). */
  readonly placeholder?: string
  /** One line of help. `code` goes in backticks: kept in the README, dropped from the usage text. */
  readonly help: string
  /** The heading it is listed under; the usage and the README list groups in the order they first appear. */
  readonly group: string
  /** With no default: what leaving it out means (`off`), shown where a default would be. */
  readonly unsetMeans?: string
  /**
   * Its text is never echoed in an error: a secret, or a URL that may carry a password. Given by its flag, where the
   * process list shows it, it gets a warning unless it is a URL without a password (`ParsedOptions`' `warnings`).
   */
  readonly secret?: boolean
  /**
   * The flag may be given more than once: its values are joined by a space, in order, and decoded as one text (its
   * environment twin holds them space-separated).
   */
  readonly repeatable?: boolean
}

export interface Option<out A> extends OptionFields<A> {
  /** Absent: the value is absent too unless the option is given. */
  readonly default?: A
}

export interface DefaultedOption<out A> extends Option<A> {
  readonly default: A
}

/**
 * One entry of an option table. The value's type comes from `type`; the default, when there is one, is checked
 * against it, and makes the value present in the parsed options (else it is optional).
 */
export function option<A>(fields: OptionFields<A> & { readonly default: NoInfer<A> }): DefaultedOption<A>
export function option<A>(fields: OptionFields<A>): Option<A>
export function option<A>(fields: OptionFields<A> & { readonly default?: A }): Option<A> {
  return fields
}

/** Options by the key their value gets in the parsed options. */
export type OptionTable = Readonly<Record<string, Option<unknown>>>

export type ValueOf<O> = O extends Option<infer A> ? A : never

type WithDefault<T extends OptionTable> = {
  readonly [K in keyof T as T[K] extends DefaultedOption<unknown> ? K : never]: ValueOf<T[K]>
}
type WithoutDefault<T extends OptionTable> = {
  readonly [K in keyof T as T[K] extends DefaultedOption<unknown> ? never : K]?: ValueOf<T[K]>
}

/** The parsed options of a table: a value for each option with a default, an optional one for the others. */
export type OptionValues<T extends OptionTable> = WithDefault<T> & WithoutDefault<T> extends infer V
  ? { readonly [K in keyof V]: V[K] }
  : never

/** How errors and the usage name an option: `--port (PORT)`, or the variable alone when it has no flag. */
export const describeOption = (option: Option<unknown>): string =>
  option.flag === undefined ? option.env : `--${option.flag} (${option.env})`
