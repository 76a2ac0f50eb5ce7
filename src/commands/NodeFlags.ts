// The Node flags and the environment every service command runs with (main.ts re-executes the
// process with them once; the benchmarks start services with them too). Measured in BENCHMARKS.md:
// - a small young generation: V8's default reserves ~60 MB more than a service uses, and at these
//   allocation rates a small one is also faster (bench/worker.ts: idle RSS 150 → 120 MB, ingest
//   2,000 → 2,400 SMS/s);
// - no V8 helper threads (`--single-threaded`: garbage collection and compilation on the main
//   thread): on the two cores a service shares with PostgreSQL they brought ~10 % of burst
//   throughput at most, and cost ~13 MB of idle RSS (their stacks and allocator arenas) and latency;
// - `gc` exposed, which the worker calls to give memory back once a burst is over (health/MemoryTrim.ts).
export const SERVICE_NODE_FLAGS: ReadonlyArray<string> = ["--max-semi-space-size=2", "--single-threaded", "--expose-gc"]

/**
 * The C library's allocator told to give freed memory back to the system once more than 1 MiB is
 * free at the top of its heap. Without it glibc raises that threshold as a burst allocates and
 * frees large buffers (socket reads, request bodies, log lines), up to 64 MiB, and keeps the memory
 * for good: 30 s after a burst the worker was at 120–124 MB, at 109–114 MB with it, for the same CPU
 * (BENCHMARKS.md). Other C libraries ignore it; a value in the environment already is kept.
 */
export const SERVICE_ENV: Readonly<Record<string, string>> = { MALLOC_TRIM_THRESHOLD_: String(1024 * 1024) }

/** Flags were chosen already (by the operator, or by the re-execution): the process runs as it is. */
export const flagsChosen = (execArgv: ReadonlyArray<string>): boolean => execArgv.some((flag) => flag.startsWith("--max-semi-space-size"))
