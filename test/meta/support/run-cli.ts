// Test-only: runs the doctor's entry point as `node test/meta/support/run-cli.ts <args after meta>`.
import { main } from "../../../src/meta/cli.ts"

main(process.argv.slice(2))
