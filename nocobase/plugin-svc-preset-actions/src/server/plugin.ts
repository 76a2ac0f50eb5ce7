// The server half of plugin-svc-preset-actions (source document §2.6): every uiSchemas:insertAdjacent
// request has its TableV2 blocks' rowKey "id" rewritten to the collection's filterTargetKey by
// recon's own rule (src/meta/PrettyField.ts, bundled in at build time: one copy of the logic).
import { Plugin } from "@nocobase/server"
import { rewriteInsertAdjacentRowKey } from "../../../../src/meta/PrettyField.ts"

interface Ctx {
  readonly action?: { readonly resourceName?: string; readonly actionName?: string; readonly params: { values?: unknown } }
}

/** The filterTargetKey a collection of a data source is loaded with, or why there is none. */
type KeyLookup = { readonly key: string } | { readonly missing: "no such collection" | "no single filterTargetKey" }

export class PluginSvcPresetActionsServer extends Plugin {
  private keyOf(collection: string, dataSource: string): KeyLookup {
    const source = (this.app as any).dataSourceManager?.dataSources?.get(dataSource)
    const found = source?.collectionManager?.getCollection(collection)
    if (found === undefined || found === null) return { missing: "no such collection" }
    const key = found.filterTargetKey ?? found.options?.filterTargetKey
    const single = Array.isArray(key) ? (key.length === 1 ? key[0] : undefined) : key
    return typeof single === "string" && single !== "" ? { key: single } : { missing: "no single filterTargetKey" }
  }

  /** The middleware, on its own so that it can be called with a context in tests. */
  readonly rowKeyMiddleware = async (ctx: Ctx, next: () => Promise<unknown>) => {
    const action = ctx.action
    if (action?.resourceName === "uiSchemas" && action.actionName === "insertAdjacent" && action.params.values !== undefined) {
      const { payload, rewrites } = rewriteInsertAdjacentRowKey(action.params.values, (collection, dataSource) => {
        const lookup = this.keyOf(collection, dataSource)
        if ("key" in lookup) return lookup.key
        this.log.warn(
          `uiSchemas:insertAdjacent: table block on ${dataSource}.${collection} keeps rowKey "id": ${lookup.missing}`,
          { collection, dataSource }
        )
        return undefined
      })
      if (rewrites.length > 0) {
        action.params.values = payload
        for (const rewrite of rewrites) {
          this.log.info(`uiSchemas:insertAdjacent: ${rewrite.path} "id" -> ${JSON.stringify(rewrite.to)} (collection ${rewrite.collection})`)
        }
      }
    }
    await next()
  }

  override async load() {
    this.app.resourceManager.use(this.rowKeyMiddleware as any, { tag: "svcRowKey", after: "acl" })
  }
}

export default PluginSvcPresetActionsServer
