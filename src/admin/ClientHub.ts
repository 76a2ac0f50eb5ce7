// The websocket clients of /ws/top-info and how a message reaches them: handed to every socket at
// once and never waited for. A client whose socket holds more than `maxBuffered` bytes that the
// OS has not taken (it stopped reading, or vanished) is dropped instead of slowing the others.
import { Deferred, Effect } from "effect"

/** About a thousand top-info messages on top of what the kernel already holds for the peer. */
export const MAX_BUFFERED_BYTES = 256 * 1024

/** One open websocket, as the hub needs it. */
export interface Connection {
  /** Hands a text frame to the socket; does not wait for the peer. */
  readonly send: (text: string) => Effect.Effect<void, unknown>
  /** Bytes written to the socket that the OS has not taken yet. */
  readonly buffered: () => number
  /** Ends the connection at once: a stalled peer would never read a closing handshake. */
  readonly drop: () => void
  /** Sends the closing frame "going away" (1001), then ends the connection: the server is stopping. */
  readonly goingAway: Effect.Effect<void>
}

/** A complete snapshot: `seq` orders snapshots by when their read started. */
export interface Message {
  readonly seq: number
  readonly text: string
}

interface Client {
  readonly connection: Connection
  /** The newest snapshot sent; an older one arriving late (a slow initial read) is skipped. */
  lastSeq: number
  readonly gone: Deferred.Deferred<void>
}

export interface ClientHub {
  readonly size: () => number
  /** Sends `message` to every client; answers how many have it (the dropped ones do not). */
  readonly broadcast: (message: Message) => Effect.Effect<number>
  /**
   * Serves one connection until `reading` ends (the peer left) or the hub drops it. `initial` is
   * sent first, unless a newer broadcast got there before it.
   */
  readonly serve: (connection: Connection, initial: Effect.Effect<Message>, reading: Effect.Effect<void>) => Effect.Effect<void>
  /** Says goodbye to every client: an open websocket would otherwise hold the server's graceful stop. */
  readonly closeAll: Effect.Effect<void>
}

export const makeClientHub = (options?: { readonly maxBuffered?: number | undefined }): ClientHub => {
  const maxBuffered = options?.maxBuffered ?? MAX_BUFFERED_BYTES
  const clients = new Set<Client>()

  const drop = (client: Client) => {
    if (!clients.delete(client)) return
    client.connection.drop()
    Deferred.doneUnsafe(client.gone, Effect.void)
  }

  const deliver = (client: Client, message: Message): Effect.Effect<boolean> =>
    Effect.suspend(() => {
      if (message.seq <= client.lastSeq) return Effect.succeed(true)
      if (client.connection.buffered() > maxBuffered) {
        drop(client)
        return Effect.succeed(false)
      }
      client.lastSeq = message.seq
      return client.connection.send(message.text).pipe(
        Effect.as(true),
        Effect.catch(() => Effect.sync(() => (drop(client), false)))
      )
    })

  return {
    size: () => clients.size,

    broadcast: (message) =>
      Effect.map(
        Effect.forEach(Array.from(clients), (client) => deliver(client, message)),
        (delivered) => delivered.filter(Boolean).length
      ),

    serve: (connection, initial, reading) =>
      Effect.suspend(() => {
        const client: Client = { connection, lastSeq: -1, gone: Deferred.makeUnsafe<void>() }
        clients.add(client)
        // Registered before the initial read starts, so no broadcast in between is missed. The
        // initial delivery runs beside the reading, in the same race (no fiber to die unseen): it
        // never ends the race by succeeding, and its failure ends the connection's serving.
        const first = Effect.andThen(Effect.flatMap(initial, (message) => deliver(client, message)), Effect.never)
        return Effect.raceFirst(first, Effect.raceFirst(reading, Deferred.await(client.gone))).pipe(
          Effect.ensuring(Effect.sync(() => clients.delete(client)))
        )
      }),

    closeAll: Effect.suspend(() =>
      Effect.forEach(Array.from(clients), (client) =>
        Effect.andThen(client.connection.goingAway, Effect.sync(() => drop(client))), { discard: true }))
  }
}
