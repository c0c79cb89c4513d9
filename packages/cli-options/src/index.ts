export {
  anyText,
  fromParse,
  fromSchema,
  instant,
  integer,
  nonEmpty,
  oneOf,
  onOff,
  redacted,
  text,
  textSchema,
  wholeNumberSchema,
  type OptionType
} from "./option-type.js"
export {
  describeOption,
  option,
  type DefaultedOption,
  type Option,
  type OptionFields,
  type OptionTable,
  type OptionValues,
  type ValueOf
} from "./option.js"
export {
  CommandLineError,
  defaultValues,
  OptionValueError,
  parseOptions,
  type ParsedOptions,
  type ParseSettings
} from "./parse.js"
export { defaultText, renderMarkdown, renderUsage, replaceBetween, type GroupNotes, type UsageText } from "./render.js"
