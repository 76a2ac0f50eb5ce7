// The client half of plugin-svc-preset-actions: registers SvcPrettyField, SvcPostAction and
// SvcPatchAction, so that page nodes using them render (without it: error #130).
import { Plugin, useAPIClient, useCollectionRecordData } from "@nocobase/client"
import { useField } from "@formily/react"
import { App } from "antd"
import { createElement as h } from "react"
import { type RecordActionProps, recordAction, SvcPrettyField as PrettyView, type SvcPrettyFieldComponentProps } from "./components.ts"

const SvcPrettyField = (props: SvcPrettyFieldComponentProps) => {
  const field: any = useField()
  return h(PrettyView, { ...props, readPretty: props.readPretty ?? (field?.readPretty !== false) })
}

const useRecordAction = (method: "POST" | "PATCH", props: RecordActionProps) => {
  const api: any = useAPIClient()
  const record = useCollectionRecordData()
  const { modal, message } = App.useApp()
  return recordAction(method, props, {
    record,
    send: async (m, url, data) => {
      const response = await api.request({ url, method: m, data })
      return { status: response.status, body: response.data }
    },
    ask: (question) => new Promise<boolean>((resolve) => modal.confirm({ title: question, onOk: () => resolve(true), onCancel: () => resolve(false) })),
    tell: (ok, text) => void (ok ? message.success(text) : message.error(text))
  })
}

const SvcPostAction = (props: RecordActionProps) => useRecordAction("POST", props)
const SvcPatchAction = (props: RecordActionProps) => useRecordAction("PATCH", props)

export class PluginSvcPresetActionsClient extends Plugin {
  override async load() {
    this.app.addComponents({ SvcPrettyField, SvcPostAction, SvcPatchAction })
  }
}

export default PluginSvcPresetActionsClient
