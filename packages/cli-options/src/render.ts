import type { Option, OptionTable } from "./option.js"

/** Notes printed after a group's options (after its table in the README), e.g. settings read elsewhere. */
export type GroupNotes = Readonly<Record<string, string>>

const groupsOf = (table: OptionTable): ReadonlyArray<readonly [string, ReadonlyArray<Option<unknown>>]> => {
  const groups = new Map<string, Array<Option<unknown>>>()
  for (const option of Object.values(table)) {
    const members = groups.get(option.group)
    if (members === undefined) groups.set(option.group, [option])
    else members.push(option)
  }
  return [...groups]
}

const placeholderOf = (option: Option<unknown>): string => option.placeholder ?? option.type.placeholder

/** How the usage and the README show an option's default: its value, else what leaving it out means. */
export const defaultText = (option: Option<unknown>): string | undefined =>
  option.default !== undefined ? String(option.default) : option.unsetMeans

const plain = (text: string): string => text.replaceAll("`", "")

// Usage layout: two spaces, the name in a column of 25, two spaces, the help; lines wrapped at 118 characters.
const INDENT = "  "
const NAME_WIDTH = 25
const HELP_COLUMN = " ".repeat(INDENT.length + NAME_WIDTH + 2)
const WIDTH = 118

/** `words` wrapped at WIDTH, the first line after `first`, the others after `rest`; a word never splits. */
const wrap = (first: string, rest: string, words: ReadonlyArray<string>): Array<string> => {
  const lines: Array<string> = []
  let line = first
  let empty = true
  for (const word of words) {
    if (!empty && line.length + 1 + word.length > WIDTH) {
      lines.push(line)
      line = rest + word
    } else line = empty ? line + word : `${line} ${word}`
    empty = false
  }
  lines.push(line)
  return lines
}

const usageLines = (option: Option<unknown>): Array<string> => {
  const name =
    option.flag === undefined
      ? `${option.env}=${placeholderOf(option)}`
      : option.type.isSwitch
        ? `--[no-]${option.flag}`
        : `--${option.flag} ${placeholderOf(option)}`
  const shown = defaultText(option)
  const twin = [
    ...(option.flag === undefined ? [] : [option.env]),
    ...(shown === undefined ? [] : [`default ${shown}`])
  ]
  // The bracket is one word for wrapping, so "(PORT, default 3000)" stays on one line.
  const words = [...plain(option.help).split(" "), ...(twin.length === 0 ? [] : [plain(`(${twin.join(", ")})`)])]
  return name.length <= NAME_WIDTH
    ? wrap(INDENT + name.padEnd(NAME_WIDTH + 2), HELP_COLUMN, words)
    : [INDENT + name, ...wrap(HELP_COLUMN, HELP_COLUMN, words)]
}

export interface UsageText {
  /** What comes before the options: the synopsis and a paragraph. */
  readonly head: string
  /** What comes after them (output, exit codes). */
  readonly tail?: string
  readonly notes?: GroupNotes
}

/**
 * The usage text (`--help`): `head`, then each group's options with their environment twin and default, then
 * `-h, --help`, then `tail`.
 */
export const renderUsage = (table: OptionTable, text: UsageText): string => {
  const sections = groupsOf(table).map(([group, options]) => {
    const note = text.notes?.[group]
    return [
      `${group}:`,
      ...options.flatMap(usageLines),
      ...(note === undefined ? [] : wrap(INDENT, INDENT, plain(note).split(" ")))
    ].join("\n")
  })
  const help = `${INDENT}${"-h, --help".padEnd(NAME_WIDTH + 2)}print this help and exit`
  return [text.head.trimEnd(), ...sections, help, ...(text.tail === undefined ? [] : [text.tail.trimEnd()])]
    .join("\n\n")
    .concat("\n")
}

const cell = (text: string): string => text.replaceAll("|", "\\|")
const code = (text: string): string => `\`${text}\``

/**
 * The README's option list: a `###` heading and a table per group (flag, environment variable, default, help),
 * each group's note after its table.
 */
export const renderMarkdown = (table: OptionTable, notes: GroupNotes = {}): string =>
  groupsOf(table)
    .map(([group, options]) => {
      const rows = options.map((option) => {
        const flag =
          option.flag === undefined
            ? ""
            : option.type.isSwitch
              ? `${code(`--${option.flag}`)}, ${code(`--no-${option.flag}`)}`
              : code(`--${option.flag} ${placeholderOf(option)}`)
        const shown = option.default !== undefined ? code(String(option.default)) : (option.unsetMeans ?? "")
        return `| ${cell(flag)} | ${code(option.env)} | ${cell(shown)} | ${cell(option.help)} |`
      })
      const note = notes[group]
      return [
        `### ${group}`,
        "",
        "| flag | environment | default | |",
        "|---|---|---|---|",
        ...rows,
        ...(note === undefined ? [] : ["", note])
      ].join("\n")
    })
    .join("\n\n")

/**
 * `document` with what lies between the lines `begin` and `end` replaced by `content`: how a script keeps a
 * generated part of a README current, and how a test sees that it is. Throws when either line is missing.
 */
export const replaceBetween = (document: string, begin: string, end: string, content: string): string => {
  const start = document.indexOf(`${begin}\n`)
  const stop = document.indexOf(`\n${end}`, start)
  if (start === -1 || stop === -1) throw new Error(`missing the lines ${begin} and ${end}`)
  return `${document.slice(0, start + begin.length + 1)}${content}${document.slice(stop)}`
}
