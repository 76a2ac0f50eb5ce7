// The metadata rules of the source document (sections 2.1–2.6 and 7), as data and small
// predicates shared by the audit, the repair planner, the refresh check and the pretty field.
import { DateTime, Option, Schema } from "effect"
import { getPath, getString, isJsonObject, type Json, type JsonObject } from "./Json.ts"

/** `options.from` values that mark synchronisation-created collections (db2cm; dbsync from NocoBase 2.0.50). */
export const SYNC_FROM: ReadonlySet<string> = new Set(["db2cm", "dbsync"])

export const ASSOCIATION_TYPES: ReadonlySet<string> = new Set(["belongsTo", "hasMany", "belongsToMany", "hasOne"])

/** §2.4: interfaces written by synchronisation that are types, not interfaces. */
export const WRONG_INTERFACES: Readonly<Record<string, string>> = {
  string: "input",
  bigInt: "integer",
  decimal: "number",
  float: "number"
}

/** §2.4: component names that do not exist (#130), replaced by InputNumber with these props. */
export const NUMBER_COMPONENTS: ReadonlySet<string> = new Set(["Integer", "Number"])
export const INPUT_NUMBER_PROPS: JsonObject = { stringMode: true, step: "1" }

/** §2.3 (and NocoBase's own defaults): the interfaces a field type may carry. The first is the default. */
export const TYPE_INTERFACES: Readonly<Record<string, ReadonlyArray<string>>> = {
  string: ["input", "url", "email", "phone", "password", "select", "radioGroup", "color"],
  uid: ["input"],
  text: ["textarea", "markdown"],
  integer: ["integer", "unixTimestamp"],
  bigInt: ["integer", "unixTimestamp"],
  decimal: ["number", "percent"],
  float: ["number", "percent"],
  double: ["number", "percent"],
  boolean: ["checkbox"],
  date: ["dateOnly"],
  dateOnly: ["dateOnly"],
  datetimeNoTz: ["datetimeNoTz"],
  datetime: ["datetime"],
  datetimeTz: ["datetime"],
  unixTimestamp: ["unixTimestamp"],
  json: ["json", "multipleSelect"],
  jsonb: ["json", "multipleSelect"],
  array: ["multipleSelect", "json"],
  belongsTo: ["m2o"],
  password: ["password"],
  // kinds that the synchronisation script's per-kind override writes as the type (§2.3 rows)
  url: ["url"],
  email: ["email"],
  phone: ["phone"],
  percent: ["percent"],
  multipleSelect: ["multipleSelect"]
}

/** §2.3: the component of each interface (native components for the overridden kinds). */
export const INTERFACE_COMPONENT: Readonly<Record<string, string>> = {
  input: "Input",
  integer: "InputNumber",
  number: "InputNumber",
  checkbox: "Checkbox",
  datetimeNoTz: "DatePicker",
  datetime: "DatePicker",
  dateOnly: "DatePicker",
  json: "Input.JSON",
  textarea: "Input.TextArea",
  m2o: "AssociationField",
  password: "Password",
  url: "Input.URL",
  email: "Input",
  phone: "Input",
  percent: "InputNumber",
  unixTimestamp: "DatePicker",
  multipleSelect: "Select",
  select: "Select",
  radioGroup: "Radio.Group",
  color: "ColorPicker",
  markdown: "Markdown"
}

/** §7: registered field components. */
export const FIELD_COMPONENTS: ReadonlySet<string> = new Set([
  "Input", "Input.TextArea", "Input.URL", "Input.JSON", "InputNumber", "DatePicker", "Select", "Checkbox",
  "Switch", "Radio.Group", "Checkbox.Group", "AssociationField", "Markdown", "Password", "ColorPicker",
  "Upload.Attachment"
])
/** §7: registered layout and block components. */
export const LAYOUT_COMPONENTS: ReadonlySet<string> = new Set([
  "CollectionField", "TableV2", "Grid", "Grid.Row", "Grid.Col", "CardItem", "FormItem", "ActionBar", "Action", "Space"
])
/** §7: custom components, registered by plugin-svc-preset-actions. */
export const CUSTOM_COMPONENTS: ReadonlySet<string> = new Set(["SvcPrettyField", "SvcPostAction", "SvcPatchAction"])
/** The package of that plugin in this repository (nocobase/plugin-svc-preset-actions/). */
export const CUSTOM_COMPONENTS_PACKAGE = "@recon/plugin-svc-preset-actions"
/** Whether an `applicationPlugins` row (name, packageName) is plugin-svc-preset-actions, whatever it was installed as. */
export const isCustomComponentsPlugin = (name: string | null, packageName: string | null): boolean =>
  packageName === CUSTOM_COMPONENTS_PACKAGE || [name, packageName].some((value) =>
    value !== null && (value === "svc-preset-actions" || value === "plugin-svc-preset-actions" || value.endsWith("/plugin-svc-preset-actions"))
  )
/**
 * NocoBase core page and block containers that the document does not list but real pages use;
 * extend this list (not the document's) when the audit flags a component the client does register.
 */
export const PAGE_CONTAINER_COMPONENTS: ReadonlySet<string> = new Set([
  "Page", "Tabs", "Tabs.TabPane", "FormV2", "Menu", "Details", "List", "GridCard", "BlockItem", "Markdown.Void"
])

const isRegisteredIn = (name: string, sets: ReadonlyArray<ReadonlySet<string>>): boolean => {
  if (sets.some((set) => set.has(name))) return true
  // `TableV2.Column`, `Action.Drawer`: a member of a registered component
  const dot = name.indexOf(".")
  return dot > 0 && sets.some((set) => set.has(name.slice(0, dot)))
}

/** Whether a field's `x-component` resolves on the client. */
export const isRegisteredFieldComponent = (name: string): boolean =>
  isRegisteredIn(name, [FIELD_COMPONENTS, CUSTOM_COMPONENTS])

/** Whether a page node's `x-component` resolves on the client. */
export const isRegisteredPageComponent = (name: string): boolean =>
  isRegisteredIn(name, [FIELD_COMPONENTS, LAYOUT_COMPONENTS, CUSTOM_COMPONENTS, PAGE_CONTAINER_COMPONENTS])

/** Whether the collection's options mark it as created by synchronisation. */
export const isSynchronised = (options: JsonObject): boolean => {
  const from = options["from"]
  return typeof from === "string" && SYNC_FROM.has(from)
}

/**
 * Whether NocoBase itself defines the collection in code: `Database#import` (a plugin's
 * `server/collections`) and the core record the defining package in `options.origin`
 * (`@nocobase/plugin-users`, `@nocobase/database`, …), and NocoBase's own `db2cm()` copies it into
 * the collections table with `from: "db2cm"`. Collections loaded from the database, synchronised or
 * made in the UI have no `origin` in their row. Such a collection is NocoBase's to maintain (its
 * own migrations undo what the business-table rules would set): every rule leaves it alone.
 */
export const platformOrigin = (options: JsonObject): string | undefined => {
  const origin = options["origin"]
  return typeof origin === "string" && origin !== "" ? origin : undefined
}

/** Every interface §2.3 and §2.4 speak about (the right ones and the wrong ones synchronisation writes). */
export const RULE_INTERFACES: ReadonlySet<string> = new Set([
  ...Object.values(TYPE_INTERFACES).flat(),
  ...Object.keys(WRONG_INTERFACES)
])

/**
 * Whether a field is one of NocoBase's system-info fields (created/updated at/by, id, table OID,
 * or one a plugin adds): NocoBase writes them read-only (`uiSchema["x-read-pretty"]: true`, the
 * default of every system-info interface) with an interface of its own that is none of the
 * interfaces of §2.3/§2.4. They are correct as NocoBase writes them: every rule leaves them alone.
 */
export const isSystemField = (iface: string | null, options: JsonObject): boolean =>
  iface !== null && iface !== "" && !RULE_INTERFACES.has(iface) && getPath(options, ["uiSchema", "x-read-pretty"]) === true

/** What §2.3 expects of a field, or undefined when the table says nothing about its type or it has no interface. */
export const expectedField = (
  type: string | null,
  iface: string | null
): { readonly interfaces: ReadonlyArray<string>; readonly component: string | undefined } | undefined => {
  if (type === null || iface === null) return undefined
  const interfaces = TYPE_INTERFACES[type]
  if (interfaces === undefined) return undefined
  return { interfaces, component: INTERFACE_COMPONENT[iface] }
}

/** Mismatches of a field against §2.3, e.g. `interface "select" is not one of input, …`. Empty when it matches. */
export const fieldMismatches = (type: string | null, iface: string | null, component: string | undefined): Array<string> => {
  const expected = expectedField(type, iface)
  if (expected === undefined) return []
  const problems: Array<string> = []
  if (!expected.interfaces.includes(iface!)) {
    problems.push(`interface ${JSON.stringify(iface)} is not one of ${expected.interfaces.join(", ")} for type ${type}`)
  } else if (expected.component !== undefined && component !== expected.component) {
    problems.push(`x-component ${component === undefined ? "(absent)" : JSON.stringify(component)} should be ${JSON.stringify(expected.component)} for interface ${iface}`)
  }
  return problems
}

// ---------------------------------------------------------------------------------------------
// svcMeta (§2.5)

export const UI_KINDS = [
  "url", "attachment_url", "internal_path", "domain", "email", "phone", "richtext_html", "unix_timestamp",
  "money", "percent", "odds", "m2m_array", "multi_select"
] as const
export type UiKind = typeof UI_KINDS[number]
export const PREVIEWS = ["image", "link", "download"] as const
export type Preview = typeof PREVIEWS[number]
export const UPLOAD_STRATEGIES = ["base64_image", "attachment", "external_url"] as const
export const VALIDATORS = ["url", "domain", "internal_path"] as const
export type Validator = typeof VALIDATORS[number]

const TimeZoneName = Schema.String.check(
  Schema.makeFilter((zone: string) => Option.isSome(DateTime.zoneMakeNamed(zone)) || `${JSON.stringify(zone)} is not an IANA time zone`)
)

/** The value schema of every svcMeta key. */
export const SVC_META_KEYS = {
  uiKind: Schema.Literals(UI_KINDS),
  preview: Schema.Literals(PREVIEWS),
  copyable: Schema.Boolean,
  uploadStrategy: Schema.Literals(UPLOAD_STRATEGIES),
  validator: Schema.Literals(VALIDATORS),
  timezone: TimeZoneName,
  formatHint: Schema.String
} as const

export const SvcMeta = Schema.Struct({
  uiKind: Schema.optionalKey(SVC_META_KEYS.uiKind),
  preview: Schema.optionalKey(SVC_META_KEYS.preview),
  copyable: Schema.optionalKey(SVC_META_KEYS.copyable),
  uploadStrategy: Schema.optionalKey(SVC_META_KEYS.uploadStrategy),
  validator: Schema.optionalKey(SVC_META_KEYS.validator),
  timezone: Schema.optionalKey(SVC_META_KEYS.timezone),
  formatHint: Schema.optionalKey(SVC_META_KEYS.formatHint)
})
export type SvcMeta = typeof SvcMeta.Type

const isSvcMetaValue: Readonly<Record<string, (value: unknown) => boolean>> = {
  uiKind: Schema.is(SVC_META_KEYS.uiKind),
  preview: Schema.is(SVC_META_KEYS.preview),
  copyable: Schema.is(SVC_META_KEYS.copyable),
  uploadStrategy: Schema.is(SVC_META_KEYS.uploadStrategy),
  validator: Schema.is(SVC_META_KEYS.validator),
  timezone: Schema.is(SVC_META_KEYS.timezone),
  formatHint: Schema.is(SVC_META_KEYS.formatHint)
}

const allowedValues: Readonly<Record<string, string>> = {
  uiKind: UI_KINDS.join(", "),
  preview: PREVIEWS.join(", "),
  copyable: "true, false",
  uploadStrategy: UPLOAD_STRATEGIES.join(", "),
  validator: VALIDATORS.join(", "),
  timezone: "an IANA time zone",
  formatHint: "a string"
}

/** Problems of an `options.svcMeta` value (unknown keys, values outside §2.5); empty when it is well-formed. */
export const svcMetaProblems = (value: Json | undefined): Array<string> => {
  if (value === undefined) return []
  if (!isJsonObject(value)) return [`svcMeta is ${value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`}, not an object`]
  const problems: Array<string> = []
  for (const [key, item] of Object.entries(value)) {
    const valid = isSvcMetaValue[key]
    if (valid === undefined) {
      problems.push(`unknown key ${JSON.stringify(key)}`)
    } else if (!valid(item)) {
      problems.push(`${key} ${JSON.stringify(item)} is not ${allowedValues[key]}`)
    }
  }
  return problems
}

/** The field's `uiSchema.x-component`, when it is a string. */
export const fieldComponent = (options: JsonObject): string | undefined => getString(options, ["uiSchema", "x-component"])
