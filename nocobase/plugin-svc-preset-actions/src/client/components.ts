// SvcPrettyField, SvcPostAction and SvcPatchAction (source document §2.6). What a value shows as,
// and the Asia/Seoul reading of a typed time, are recon's rules (src/meta/PrettyField.ts), bundled
// in: this file only draws their answers.
import { createElement as h, useState, type ReactNode } from "react"
import {
  formatUnixTimestamp,
  parseSeoulDateTime,
  prettyDisplay,
  SEOUL,
  type SvcPrettyFieldProps
} from "../../../../src/meta/PrettyField.ts"

const DEFAULTS: SvcPrettyFieldProps = { fieldName: "", uiKind: "url", preview: "none", copyable: false, validator: "none", ellipsis: false }

const CELL = { display: "inline-flex", alignItems: "center", gap: 6, maxWidth: "100%" } as const
const ELLIPSIS = { overflow: "hidden", textOverflow: "ellipsis", whiteSpace: "nowrap", display: "inline-block", maxWidth: 320 } as const

/** The copy action: the text onto the clipboard, "copied" for a moment. */
const CopyButton = ({ text }: { readonly text: string }) => {
  const [done, setDone] = useState(false)
  return h("button", {
    type: "button",
    className: "svc-pretty-copy",
    title: "Copy",
    "aria-label": `Copy ${text}`,
    style: { border: "none", background: "none", cursor: "pointer", color: "#1677ff", padding: 0 },
    onClick: (event: { stopPropagation: () => void }) => {
      event.stopPropagation()
      void navigator.clipboard?.writeText(text).then(() => {
        setDone(true)
        setTimeout(() => setDone(false), 1500)
      }, () => undefined)
    }
  }, done ? "✓" : "⧉")
}

/** The edit drawer's time input: shows and reads Asia/Seoul wall time, writes back unix seconds. */
const SeoulTimeInput = (props: { readonly value: unknown; readonly onChange: (seconds: number | null) => void; readonly disabled?: boolean }) => {
  const shown = formatUnixTimestamp(props.value)?.text ?? ""
  const [draft, setDraft] = useState<string | undefined>(undefined)
  const [bad, setBad] = useState(false)
  return h("span", { className: "svc-pretty-field svc-pretty-time-input", style: CELL },
    h("input", {
      value: draft ?? shown,
      disabled: props.disabled,
      placeholder: "YYYY-MM-DD HH:mm:ss",
      style: { borderColor: bad ? "#ff4d4f" : undefined },
      onChange: (event: { target: { value: string } }) => setDraft(event.target.value),
      onBlur: () => {
        if (draft === undefined) return
        if (draft.trim() === "") {
          props.onChange(null)
          setDraft(undefined)
          setBad(false)
          return
        }
        const seconds = parseSeoulDateTime(draft)
        setBad(seconds === undefined)
        if (seconds !== undefined) {
          props.onChange(seconds)
          setDraft(undefined)
        }
      }
    }),
    h("span", { style: { color: "#888" } }, SEOUL))
}

export interface SvcPrettyFieldComponentProps extends Partial<SvcPrettyFieldProps> {
  readonly value?: unknown
  readonly onChange?: (value: unknown) => void
  /** Formily's pattern: a read-pretty node shows, an editable unix_timestamp node edits in Asia/Seoul. */
  readonly readPretty?: boolean
  readonly disabled?: boolean
}

/** The read-only display node; editable only for unix_timestamp (the edit drawer), in Asia/Seoul. */
export const SvcPrettyField = (props: SvcPrettyFieldComponentProps) => {
  const merged: SvcPrettyFieldProps = {
    fieldName: props.fieldName ?? DEFAULTS.fieldName,
    uiKind: props.uiKind ?? DEFAULTS.uiKind,
    preview: props.preview ?? DEFAULTS.preview,
    copyable: props.copyable ?? DEFAULTS.copyable,
    validator: props.validator ?? DEFAULTS.validator,
    ellipsis: props.ellipsis ?? DEFAULTS.ellipsis
  }
  if (merged.uiKind === "unix_timestamp" && props.readPretty === false && props.onChange !== undefined) {
    return h(SeoulTimeInput, { value: props.value, onChange: props.onChange, disabled: props.disabled })
  }
  const display = prettyDisplay(props.value, merged)
  const base = { className: `svc-pretty-field svc-pretty-${display.kind}`, "data-ui-kind": merged.uiKind, style: CELL }
  let body: ReactNode
  switch (display.kind) {
    case "empty":
      return h("span", { ...base, className: `${base.className}`, style: { color: "#bbb" } }, "—")
    case "image":
      body = h("a", { href: display.src, target: "_blank", rel: "noopener noreferrer" },
        h("img", { src: display.src, alt: merged.fieldName, style: { maxHeight: 48, maxWidth: 96, objectFit: "contain", borderRadius: 4 } }))
      break
    case "link":
      body = h("a", {
        href: display.href,
        target: display.href.startsWith("http") ? "_blank" : undefined,
        rel: "noopener noreferrer",
        download: display.download ? "" : undefined,
        style: merged.ellipsis ? ELLIPSIS : undefined,
        title: display.text
      }, display.text)
      break
    case "time":
      body = h("time", { dateTime: display.iso, title: `${display.iso} (${display.timeZone})` }, display.text)
      break
    case "text":
      body = h("span", { style: display.ellipsis ? ELLIPSIS : undefined, title: display.ellipsis ? display.text : undefined }, display.text)
      break
  }
  return h("span", base, body, display.copy === undefined ? null : h(CopyButton, { text: display.copy }))
}

/** Where a record action may send: a path on the same server (no scheme, no `//`). */
export const internalUrl = (url: unknown): string | undefined =>
  typeof url === "string" && url.startsWith("/") && !url.startsWith("//") && !/[\s\\]/.test(url) ? url : undefined

/** The message of an answer: `data.message`, `message`, the first of `errors`, else the status. */
export const answerMessage = (status: number, body: any): string => {
  const pick = (value: unknown) => typeof value === "string" && value.trim() !== "" ? value : undefined
  return pick(body?.data?.message) ?? pick(body?.message) ?? pick(body?.errors?.[0]?.message) ?? `HTTP ${status}`
}

export interface RecordActionProps {
  /** The internal URL (a path) the record is sent to. */
  readonly url?: string
  readonly title?: string
  /** The confirmation question; the action is sent only when it is accepted. */
  readonly confirm?: string
}

export interface RecordActionDeps {
  readonly record: unknown
  readonly send: (method: "POST" | "PATCH", url: string, record: unknown) => Promise<{ readonly status: number; readonly body: unknown }>
  readonly ask: (question: string) => Promise<boolean>
  readonly tell: (ok: boolean, message: string) => void
}

/** A record action: confirm first, then POST/PATCH the record to the configured URL, then show the answer's message. */
export const recordAction = (method: "POST" | "PATCH", props: RecordActionProps, deps: RecordActionDeps) => {
  const url = internalUrl(props.url)
  const label = props.title ?? (method === "POST" ? "Send" : "Update")
  return h("a", {
    className: `svc-record-action svc-${method.toLowerCase()}-action`,
    role: "button",
    "aria-disabled": url === undefined,
    title: url === undefined ? "no internal URL configured (x-component-props.url)" : `${method} ${url}`,
    style: { cursor: url === undefined ? "not-allowed" : "pointer", color: url === undefined ? "#bbb" : undefined },
    onClick: async (event: { preventDefault: () => void; stopPropagation: () => void }) => {
      event.preventDefault()
      event.stopPropagation()
      if (url === undefined) return deps.tell(false, "no internal URL configured for this action")
      if (!(await deps.ask(props.confirm ?? `${label}: ${method} this record to ${url}?`))) return
      try {
        const answer = await deps.send(method, url, deps.record)
        deps.tell(answer.status >= 200 && answer.status < 300, answerMessage(answer.status, answer.body))
      } catch (error: any) {
        const response = error?.response
        deps.tell(false, response ? answerMessage(response.status, response.data) : String(error?.message ?? error))
      }
    }
  }, label)
}
