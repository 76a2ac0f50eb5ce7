// `node src/main.ts all` as a real process for the test's scope: on a test database, at free
// ports, with the test's tokens and whatever else `env` says; SIGKILLed at the scope's end if
// still running. Also: one SMS arranged to be approved end to end (a trusted phone, a whitelisted
// sender, a player with a pending deposit of the SMS's amount).
import { Effect, type Scope } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "../../src/db/EmbeddedPostgres.ts"
import { runSql } from "./database.ts"
import { addDeposit, addPlayer } from "./match.ts"
import { type Spawned, spawnCommand, waitForUrl } from "./process.ts"
import { ADMIN_TOKEN, RECON_TOKEN } from "./recon.ts"
import { pushForwarder, register } from "./worker.ts"

export interface AllProcess extends Spawned {
  /** Base URLs of the four ports. */
  readonly recon: string
  readonly push: string
  readonly admin: string
  readonly wallet: string
  /** Its working directory (heartbeat file), removed at the end. */
  readonly dir: string
}

/** `all` on `db` until the scope closes, once its four ports answer and its worker is ready. */
export const startAll = (db: string, env: Record<string, string> = {}): Effect.Effect<AllProcess, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const [recon, push, admin, wallet] = [await freePort(), await freePort(), await freePort(), await freePort()]
      const dir = mkdtempSync(join(tmpdir(), "recon-all-"))
      const spawned = spawnCommand(["all"], {
        DATABASE_URL: db,
        SVC_RECON_PORT: String(recon),
        SVC_PUSH_PORT: String(push),
        SVC_ADMIN_PORT: String(admin),
        SVC_WALLET_PORT: String(wallet),
        SVC_WORKER_HEARTBEAT_FILE: join(dir, "worker.heartbeat"),
        SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN,
        SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN,
        ...env
      }, { cwd: dir })
      const running = {
        ...spawned,
        dir,
        recon: `http://127.0.0.1:${recon}`,
        push: `http://127.0.0.1:${push}`,
        admin: `http://127.0.0.1:${admin}`,
        wallet: `http://127.0.0.1:${wallet}`
      }
      const up = [`${running.push}/health/ready`, `${running.recon}/health`, `${running.wallet}/health`, `${running.admin}/`]
      if (!(await Promise.all(up.map((url) => waitForUrl(url, 90_000)))).every(Boolean)) {
        spawned.child.kill("SIGKILL")
        throw new Error(`all did not become ready:\n${spawned.output()}`)
      }
      return running
    }),
    (all) =>
      Effect.sync(() => {
        if (all.child.exitCode === null && all.child.signalCode === null) all.child.kill("SIGKILL")
        rmSync(all.dir, { recursive: true, force: true })
      })
  )

/** A bank SMS of `payer`'s deposit of `amount` won, as 신한 sends it. */
export const depositSms = (payer: string, amount: number) =>
  `[Web발신]\n신한 11/22 09:10\n입금 ${amount.toLocaleString("en-US")}원\n${payer}\n잔액 5,000,000`

/** A trusted phone `deviceId` registered for SmsForwarder, and its sender whitelisted. */
export const trustedPhone = async (db: string, deviceId: string, sender: string) => {
  await register(db, { deviceId, format: "smsforwarder", trusted: true })
  await runSql(db, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO recon.shooter_phone (phone) VALUES (${sender}) ON CONFLICT DO NOTHING`
  }))
}

/** A pending deposit of `payer` and the SMS that funds it, pushed through the webhook; answers the SMS id. */
export const pushFundingSms = async (db: string, push: string, deviceId: string, sender: string, payer: string, amount: number) => {
  const player = await addPlayer(db, payer)
  await addDeposit(db, player, payer, String(amount))
  const answer = await pushForwarder(push, deviceId, { from: sender, sms: depositSms(payer, amount) })
  if (answer.http !== 200) throw new Error(`push refused: ${JSON.stringify(answer)}`)
  return answer.body.data.sms_id as number
}
