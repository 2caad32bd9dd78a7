# syntax=docker/dockerfile:1
# Node 24: the current LTS, the runtime users deploy (Node 20 reached end of life in April 2026).
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: on Node 24 the service loads better-sqlite3 13, which ships
# prebuilt binaries; better-sqlite3 12 (for Node 20, built by its script) is unused
# here (see src/database/better-sqlite3.ts).
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
COPY scripts/bundle-service.mjs ./scripts/
# nest build, then the one-file bundle the service starts from (scripts/bundle-service.mjs).
RUN npm run build && npm prune --omit=dev

FROM ${NODE_IMAGE} AS runtime
# A 64 MiB young generation (V8's default is 16): under load a request's objects
# outlive a small one while it awaits the database and get copied and promoted;
# on PostgreSQL that was a third of the service's extra CPU (see BENCHMARKS.md).
ENV NODE_OPTIONS=--max-semi-space-size=64
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_URL=sqlite:/app/data/plant-store.sqlite
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY scripts/warm-compile-cache.mjs ./scripts/
RUN mkdir -p /app/data /app/.compile-cache && chown node:node /app/data /app/.compile-cache
USER node
# Node's compile cache, filled here by starting the service once with the CMD's own
# arguments, as the user it runs as (the cache is per Node version, V8 flags and user
# id): each start reads it from the read-only image instead of compiling the bundle
# again. On Node 24 about 130 ms less CPU before the first answer and 8 MiB less idle
# RSS (BENCHMARKS.md, "Start-up and RSS").
ENV NODE_COMPILE_CACHE=/app/.compile-cache
RUN ["node", "scripts/warm-compile-cache.mjs", "--no-allocation-site-pretenuring", "--import=./dist/tracing/preload.js", "dist/bundle/main.js"]
EXPOSE 3000
VOLUME ["/app/data"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Migrations run at startup, before the first request is taken (unless
# DB_MIGRATE_ON_START=false: then `node dist/migrate.main.js` is the job).
# dist/bundle/main.js: the application in one file, which starts in about half
# the time of the unbundled dist/main.js (see scripts/bundle-service.mjs).
# --no-allocation-site-pretenuring: under sustained load V8 starts allocating some of
# a request's objects straight into the old generation ("pretenuring"); dead there
# until the next full collection, they keep the young objects they point to alive,
# so every young collection copies and promotes megabytes (15-25 ms pauses instead
# of 1-3) and the old generation fills. Without it a request's objects die young.
# A V8 flag, which NODE_OPTIONS does not take. See BENCHMARKS.md.
# --import: the tracing preload, which loads OpenTelemetry only when OTEL_* variables
# ask for traces (docs/TRACING.md).
CMD ["node", "--no-allocation-site-pretenuring", "--import=./dist/tracing/preload.js", "dist/bundle/main.js"]
