# The service's production image (docs/deployment.md). Multi-stage: the build stage compiles with
# every dependency; the image holds production dependencies only (no localnet package, no LiteSVM),
# runs as the unprivileged `node` user, and starts the entry point the topology test starts:
# `node dist/src/main.js`, its role (`api`, `worker`) and everything else from the environment.
# Not built in CI here: these machines have no container engine (the topology test runs the same
# commands and variables on Debian's packages; test/deployment-files.spec.ts holds them together).

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/localnet/package.json packages/localnet/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:20-bookworm-slim AS production
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/localnet/package.json packages/localnet/
RUN npm ci --omit=dev --workspaces=false --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=build /app/public ./public
USER node
# 3000: the API (behind the load balancer); 9464: Prometheus metrics (not behind it).
EXPOSE 3000 9464
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/src/main.js"]
