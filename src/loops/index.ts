// Every loop of the worker: adding one is a file in src/loops and a line here.
import type { Loop } from "./Loop.ts"

export const loops: ReadonlyArray<Loop> = []
