// deploy/k8s against Kubernetes' own schemas, with no cluster: every object is validated by the
// `kubernetes-models` packages (JSON schemas generated from Kubernetes' OpenAPI document, and the
// Prometheus Operator's CRDs), and checked for fields the API does not know (TypeScript's excess
// property check on the same models' types: a misspelt `readinesProbe` is otherwise ignored by
// the API server, and the probe silently missing). Then what DESIGN section 11 and the runbook
// rely on: the probes, the migration Job, the Secrets, non-root and read-only pods, and wiring
// that points at Services and ports that exist.
import { assert, describe, it } from "@effect/vitest"
import { ConfigMap, Namespace, Secret, Service } from "kubernetes-models/v1"
import { Deployment } from "kubernetes-models/apps/v1"
import { Job } from "kubernetes-models/batch/v1"
import { PodDisruptionBudget } from "kubernetes-models/policy/v1"
import { PodMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import ts from "typescript"
import { parseAllDocuments, parse } from "yaml"

const root = join(import.meta.dirname, "../..")
const k8s = join(root, "deploy/k8s")

/** The model class and the type module of every kind the manifests use. */
const kinds: Record<string, { readonly model: { new(data: any): { validate(): void } }; readonly types: string; readonly type: string }> = {
  "v1/Namespace": { model: Namespace, types: "kubernetes-models/v1/Namespace", type: "INamespace" },
  "v1/ConfigMap": { model: ConfigMap, types: "kubernetes-models/v1/ConfigMap", type: "IConfigMap" },
  "v1/Secret": { model: Secret, types: "kubernetes-models/v1/Secret", type: "ISecret" },
  "v1/Service": { model: Service, types: "kubernetes-models/v1/Service", type: "IService" },
  "apps/v1/Deployment": { model: Deployment, types: "kubernetes-models/apps/v1/Deployment", type: "IDeployment" },
  "batch/v1/Job": { model: Job, types: "kubernetes-models/batch/v1/Job", type: "IJob" },
  "policy/v1/PodDisruptionBudget": { model: PodDisruptionBudget, types: "kubernetes-models/policy/v1/PodDisruptionBudget", type: "IPodDisruptionBudget" },
  "monitoring.coreos.com/v1/PodMonitor": {
    model: PodMonitor,
    types: "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor",
    type: "IPodMonitor"
  }
}

interface Manifest {
  readonly file: string
  readonly doc: any
}

const load = (file: string): Array<Manifest> =>
  parseAllDocuments(readFileSync(join(k8s, file), "utf8")).map((document) => {
    assert.deepStrictEqual(document.errors, [], `${file} is not valid YAML`)
    return { file, doc: document.toJS() }
  })

const kustomization = parse(readFileSync(join(k8s, "kustomization.yaml"), "utf8"))
const applied: Array<Manifest> = (kustomization.resources as Array<string>).flatMap(load)
const monitoring = readdirSync(join(k8s, "monitoring")).flatMap((file) => load(`monitoring/${file}`))
const all = [...applied, ...monitoring]

const named = (kind: string, name: string) => {
  const found = applied.find(({ doc }) => doc.kind === kind && doc.metadata.name === name)
  assert.isDefined(found, `${kind} ${name}`)
  return found!.doc
}
const deployments = applied.filter(({ doc }) => doc.kind === "Deployment").map(({ doc }) => doc)
const podSpecs = [...deployments, named("Job", "recon-migrate")].map((doc) => ({ name: doc.metadata.name as string, spec: doc.spec.template.spec }))
const containerOf = (deployment: string) => named("Deployment", deployment).spec.template.spec.containers[0]
const portOf = (container: any, port: string | number) =>
  typeof port === "number" ? port : container.ports.find((p: any) => p.name === port)?.containerPort
const envOf = (container: any): Record<string, any> => Object.fromEntries(container.env.map((e: any) => [e.name, e.value ?? e.valueFrom]))

/** TypeScript's diagnostics for `const m<i>: <type> = <the manifest>` (excess and mistyped fields). */
const typeErrors = (manifests: ReadonlyArray<Manifest>): Array<string> => {
  const file = join(root, "test/deploy/manifests.generated.ts")
  const lines = manifests.map(({ doc }, i) => {
    const kind = kinds[`${doc.apiVersion}/${doc.kind}`]!
    return `export const m${i}: import("${kind.types}").${kind.type} = ${JSON.stringify(doc)}`
  })
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    lib: ["lib.es2023.d.ts"],
    types: [],
    strict: true,
    noEmit: true,
    skipLibCheck: true
  }
  const host = ts.createCompilerHost(options)
  const { fileExists, getSourceFile } = host
  host.fileExists = (name) => name === file || fileExists.call(host, name)
  host.getSourceFile = (name, language, ...rest) =>
    name === file ? ts.createSourceFile(name, lines.join("\n"), language) : getSourceFile.call(host, name, language, ...rest)
  const program = ts.createProgram([file], options, host)
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const at = diagnostic.file?.fileName === file ? manifests[diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start!).line] : undefined
    return `${at === undefined ? diagnostic.file?.fileName : `${at.file} ${at.doc.kind} ${at.doc.metadata.name}`}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")}`
  })
}

describe("deploy/k8s against Kubernetes' schemas", () => {
  it("lists every manifest in kustomization.yaml", () => {
    const files = readdirSync(k8s).filter((file) => file.endsWith(".yaml") && file !== "kustomization.yaml").sort()
    assert.deepStrictEqual([...kustomization.resources].sort(), files)
  })

  it("validates every object with the kubernetes-models schemas", () => {
    for (const { file, doc } of all) {
      const kind = kinds[`${doc.apiVersion}/${doc.kind}`]
      assert.isDefined(kind, `${file}: ${doc.apiVersion} ${doc.kind} has no model here`)
      assert.doesNotThrow(() => new kind!.model(doc).validate(), undefined, `${file} ${doc.kind} ${doc.metadata?.name}`)
    }
  })

  it("has no field the API does not know", () => {
    assert.deepStrictEqual(typeErrors(all), [])
  }, 30_000)

  it("catches a broken manifest both ways (the checks are not vacuous)", () => {
    const worker = structuredClone(named("Deployment", "recon-worker"))
    worker.spec.template.spec.containers[0].readinesProbe = worker.spec.template.spec.containers[0].readinessProbe
    const typo = typeErrors([{ file: "recon-worker.yaml", doc: worker }])
    assert.strictEqual(typo.length, 1)
    assert.match(typo[0]!, /readinesProbe/)
    worker.spec.replicas = "two"
    assert.throws(() => new Deployment(worker).validate(), /replicas/)
  }, 30_000)
})

describe("deploy/k8s holds what DESIGN section 11 and the runbook rely on", () => {
  it("runs each service from the image with its command, two workers or more", () => {
    const commands = Object.fromEntries(deployments.map((d) => [d.metadata.name, d.spec.template.spec.containers[0].args]))
    assert.deepStrictEqual(commands, {
      "recon-service": ["recon"],
      "admin-service": ["admin"],
      "wallet-service": ["wallet"],
      "recon-worker": ["worker"]
    })
    assert.isAtLeast(named("Deployment", "recon-worker").spec.replicas, 2)
    for (const { name, spec } of podSpecs) assert.strictEqual(spec.containers[0].image, "recon", name)
    assert.strictEqual(kustomization.images[0].name, "recon")
  })

  it("probes the worker on /health/live and /health/ready, the others on /health", () => {
    const worker = containerOf("recon-worker")
    assert.deepStrictEqual([worker.livenessProbe.httpGet.path, portOf(worker, worker.livenessProbe.httpGet.port)], ["/health/live", 8019])
    assert.deepStrictEqual([worker.readinessProbe.httpGet.path, portOf(worker, worker.readinessProbe.httpGet.port)], ["/health/ready", 8019])
    for (const [name, port] of [["recon-service", 8017], ["admin-service", 8016], ["wallet-service", 8018]] as const) {
      const container = containerOf(name)
      assert.deepStrictEqual([container.readinessProbe.httpGet.path, portOf(container, container.readinessProbe.httpGet.port)], ["/health", port], name)
      // Liveness does not follow the database: an outage must not restart every pod.
      assert.strictEqual(portOf(container, container.livenessProbe.tcpSocket.port), port, name)
    }
  })

  it("migrates in a Job", () => {
    const job = named("Job", "recon-migrate")
    assert.deepStrictEqual(job.spec.template.spec.containers[0].args, ["migrate"])
    assert.strictEqual(job.spec.template.spec.restartPolicy, "Never")
  })

  it("keeps the database URL and the tokens in a Secret, committed empty, each pod given only its own", () => {
    const secret = named("Secret", "recon-secrets")
    assert.deepStrictEqual(secret.stringData, { DATABASE_URL: "", SVC_INTERNAL_SERVICE_TOKEN_ADMIN: "", SVC_INTERNAL_SERVICE_TOKEN_RECON: "" })
    const secretKeys = (name: string) =>
      Object.entries(envOf(containerOf(name))).filter(([, from]) => from?.secretKeyRef !== undefined).map(([key, from]) => {
        assert.strictEqual(from.secretKeyRef.name, "recon-secrets")
        assert.strictEqual(from.secretKeyRef.key, key)
        return key
      }).sort()
    assert.deepStrictEqual(secretKeys("recon-service"), ["DATABASE_URL", "SVC_INTERNAL_SERVICE_TOKEN_ADMIN"])
    assert.deepStrictEqual(secretKeys("admin-service"), ["DATABASE_URL", "SVC_INTERNAL_SERVICE_TOKEN_ADMIN", "SVC_INTERNAL_SERVICE_TOKEN_RECON"])
    assert.deepStrictEqual(secretKeys("wallet-service"), ["DATABASE_URL", "SVC_INTERNAL_SERVICE_TOKEN_RECON"])
    assert.deepStrictEqual(secretKeys("recon-worker"), ["DATABASE_URL", "SVC_INTERNAL_SERVICE_TOKEN_RECON"])
    // Stage C: only per-caller tokens, never the shared one.
    const config = named("ConfigMap", "recon-config").data
    assert.strictEqual(config.SVC_PER_CALLER_TOKEN_REQUIRED, "on")
    for (const { spec } of podSpecs) {
      assert.notProperty(envOf(spec.containers[0]), "SVC_INTERNAL_SERVICE_TOKEN")
      assert.deepStrictEqual(spec.containers[0].envFrom, [{ configMapRef: { name: "recon-config" } }])
    }
  })

  it("runs every pod as the image's non-root user on a read-only root file system, /tmp an emptyDir", () => {
    const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8")
    assert.match(dockerfile, /^USER 10001:10001$/m)
    for (const { name, spec } of podSpecs) {
      assert.deepInclude(spec.securityContext, { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001 }, name)
      assert.strictEqual(spec.automountServiceAccountToken, false, name)
      const container = spec.containers[0]
      assert.deepStrictEqual(container.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } }, name)
      for (const resource of ["cpu", "memory"]) {
        assert.isDefined(container.resources.requests[resource], `${name} requests ${resource}`)
        assert.isDefined(container.resources.limits[resource], `${name} limits ${resource}`)
      }
      if (name !== "recon-migrate") {
        assert.deepStrictEqual(container.volumeMounts, [{ name: "tmp", mountPath: "/tmp" }], name)
        assert.property(spec.volumes.find((v: any) => v.name === "tmp"), "emptyDir", name)
      }
    }
    // The heartbeat that `probe` reads is on that emptyDir.
    assert.match(envOf(containerOf("recon-worker")).SVC_WORKER_HEARTBEAT_FILE, /^\/tmp\//)
  })

  it("keeps a worker through voluntary disruptions", () => {
    const budget = named("PodDisruptionBudget", "recon-worker")
    assert.strictEqual(budget.spec.minAvailable, 1)
    assert.deepStrictEqual(budget.spec.selector.matchLabels, named("Deployment", "recon-worker").spec.template.metadata.labels)
  })

  it("wires services to Services and ports that exist", () => {
    const services = applied.filter(({ doc }) => doc.kind === "Service").map(({ doc }) => doc)
    for (const service of services) {
      const deployment = deployments.find((d) => Object.entries(service.spec.selector).every(([k, v]) => d.spec.template.metadata.labels[k] === v))
      assert.isDefined(deployment, `Service ${service.metadata.name} selects no Deployment`)
      for (const port of service.spec.ports) assert.isDefined(portOf(deployment.spec.template.spec.containers[0], port.targetPort), service.metadata.name)
    }
    const urls = [
      envOf(containerOf("admin-service")).RECON_SERVICE_URL,
      envOf(containerOf("admin-service")).WORKER_HEALTH_URL,
      envOf(containerOf("recon-worker")).WALLET_SERVICE_URL,
      envOf(containerOf("recon-worker")).ADMIN_SERVICE_URL
    ]
    assert.deepStrictEqual(urls, ["http://recon-service:8017", "http://recon-worker:8019", "http://wallet-service:8018", "http://admin-service:8016"])
    for (const url of urls) {
      const { hostname, port } = new URL(url)
      const service = services.find((s) => s.metadata.name === hostname)
      assert.isDefined(service, url)
      assert.isTrue(service.spec.ports.some((p: any) => p.port === Number(port)), url)
    }
  })

  it("lets Prometheus find every service's GET /metrics, the job named as alerts.yml expects", () => {
    for (const deployment of deployments) {
      const { annotations, labels } = deployment.spec.template.metadata
      const container = deployment.spec.template.spec.containers[0]
      assert.deepStrictEqual(annotations, { "prometheus.io/scrape": "true", "prometheus.io/port": String(container.ports[0].containerPort), "prometheus.io/path": "/metrics" })
      assert.include(["recon_service", "admin_service", "wallet_service", "recon_worker"], labels["app.kubernetes.io/component"])
    }
    const monitor = monitoring.find(({ doc }) => doc.kind === "PodMonitor")!.doc
    assert.strictEqual(monitor.spec.jobLabel, "app.kubernetes.io/component")
    const portNames = new Set(deployments.map((d) => d.spec.template.spec.containers[0].ports[0].name))
    assert.deepStrictEqual(new Set(monitor.spec.podMetricsEndpoints.map((e: any) => e.port)), portNames)
  })
})
