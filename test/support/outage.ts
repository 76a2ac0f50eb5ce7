// The run's outage cluster: one embedded PostgreSQL server that the database-down tests stop and
// start, shared by them instead of one initdb per file. The vitest process owns it (globalSetup
// serves it on a Unix socket in the run's directory, no port); a test file takes it with
// `takeOutageCluster`, which waits its turn: one file at a time holds it, from its own database's
// creation until the file lets go (the socket closes, also when the worker dies). The cluster is
// started at the first request (a run without these tests never pays for it) and started again,
// if a file left it stopped, before the next file gets it.
//
// A line protocol: the server answers a connection, when its turn comes, with the grant
// (JSON: the server's URL and its migrated template, or the error that prevented them); then
// "stop", "crash" and "start" lines are answered "ok" or the failure.
import { mkdtempSync } from "node:fs"
import { createConnection, createServer, type Socket } from "node:net"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { inject } from "vitest"
import { type EmbeddedCluster, startEmbeddedPostgres } from "../../src/db/EmbeddedPostgres.ts"
import { copyDatabaseOn, createMigratedDatabaseOn } from "./database.ts"

type Grant = { readonly url: string; readonly template: string } | { readonly error: string }

const lines = (socket: Socket) => createInterface({ input: socket, crlfDelay: Infinity })

/**
 * Serves the outage cluster on a socket at `socket`, its data under `dir` (persistent: stopping
 * a non-persistent cluster deletes its files, and the tests start it again).
 */
export const serveOutageCluster = async (dir: string, socket: string) => {
  let prepared: Promise<{ readonly cluster: EmbeddedCluster; readonly template: string }> | undefined
  const prepare = () =>
    prepared ??= (async () => {
      const cluster = await startEmbeddedPostgres({ dir, persistent: true })
      const template = new URL(await createMigratedDatabaseOn(cluster.url, "recon_template")).pathname.slice(1)
      return { cluster, template }
    })()

  /** One file's turn: from the grant until its socket closes; then the cluster is up again for the next. */
  const lease = async (client: Socket): Promise<void> => {
    if (client.destroyed) return
    const closed = new Promise<void>((resolve) => client.once("close", () => resolve()))
    let cluster: EmbeddedCluster | undefined
    try {
      const ready = await prepare()
      cluster = ready.cluster
      client.write(`${JSON.stringify({ url: cluster.url, template: ready.template } satisfies Grant)}\n`)
    } catch (error) {
      client.end(`${JSON.stringify({ error: `the outage cluster could not start: ${String(error)}` } satisfies Grant)}\n`)
    }
    if (cluster !== undefined) {
      const { stop, start, crash } = cluster
      lines(client).on("line", (command) => {
        const run = command === "stop" ? stop() : command === "crash" ? crash() : command === "start" ? start() : Promise.reject(new Error(`unknown command ${command}`))
        run.then(() => client.write("ok\n"), (error: unknown) => client.write(`${String(error)}\n`))
      })
    }
    await closed
    await cluster?.start()
  }

  let turns = Promise.resolve()
  const server = createServer((client) => {
    client.on("error", () => {}) // a worker that dies waiting or mid-turn only gives up its turn
    turns = turns.then(() => lease(client)).catch(() => {})
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(socket, resolve)
  })
  return {
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      if (prepared !== undefined) await prepared.then(({ cluster }) => cluster.stop(), () => {})
    }
  }
}

export interface OutageCluster {
  /** This file's own database on the outage cluster, a copy of its migrated template. */
  readonly url: string
  /** A directory of this file's own, for the files its services write. */
  readonly dir: string
  /** Stops the PostgreSQL server: every connection to it fails until `start`. */
  readonly stop: () => Promise<void>
  /** Stops it as a crash would (immediate shutdown): what was committed but not yet flushed to the WAL is lost. */
  readonly crash: () => Promise<void>
  readonly start: () => Promise<void>
  /** Ends this file's turn (the next file may have the cluster). */
  readonly release: () => Promise<void>
}

/** Waits for this file's turn with the outage cluster and makes its database there (`prefix`_…). */
export const takeOutageCluster = async (prefix: string): Promise<OutageCluster> => {
  const socket = createConnection(inject("outageSocket"))
  let failure: Error | undefined
  socket.on("error", (error) => failure = error)
  const replies = lines(socket)[Symbol.asyncIterator]()
  const reply = async (): Promise<string> => {
    const next = await replies.next()
    if (next.done === true) throw new Error(`the outage cluster's socket closed${failure === undefined ? "" : `: ${failure.message}`}`)
    return next.value
  }
  const release = () =>
    new Promise<void>((resolve) => {
      if (socket.destroyed) return resolve()
      socket.once("close", () => resolve())
      socket.end()
    })
  const command = (name: "stop" | "crash" | "start") => async () => {
    socket.write(`${name}\n`)
    const answer = await reply()
    if (answer !== "ok") throw new Error(`the outage cluster's ${name} failed: ${answer}`)
  }
  try {
    const grant = JSON.parse(await reply()) as Grant
    if ("error" in grant) throw new Error(grant.error)
    const url = await copyDatabaseOn(grant.url, grant.template, prefix)
    const dir = mkdtempSync(join(inject("scratchDir"), `${prefix}-`))
    return { url, dir, stop: command("stop"), crash: command("crash"), start: command("start"), release }
  } catch (error) {
    await release()
    throw error
  }
}
