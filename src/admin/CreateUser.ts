// `admin --create-user NAME`. Placeholder until issue 4 lands.
export const main = (_args: ReadonlyArray<string>) => {
  process.stderr.write("admin --create-user: not built yet\n")
  process.exit(2)
}
