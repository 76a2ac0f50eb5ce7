// wallet_service's own settings (DESIGN section 3): its port and the recon caller's tokens it accepts.
import { all, port, type Settings } from "../config/Keys.ts"
import { readTokenPolicy, type TokenPolicy } from "../config/Tokens.ts"

export interface WalletSettings {
  readonly port: number
  /** Tokens accepted on /internal/wallet/* (the recon worker's). */
  readonly tokens: TokenPolicy
}

export const readWalletSettings: Settings<WalletSettings> = all({
  port: port("SVC_WALLET_PORT", 8018),
  tokens: readTokenPolicy("recon")
})
