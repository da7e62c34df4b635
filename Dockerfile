# syntax=docker/dockerfile:1
# The extlb image: one image for `extlb controller`, `extlb webhook` and `extlb picker` (and every
# other extlb command), as examples/deploy names it. From the repository root:
#   docker build -t extlb/extlb:0.1.0 .

# build: the whole workspace with its dev dependencies, compiled.
FROM node:20.20.2-bookworm-slim AS build
ENV TURBO_TELEMETRY_DISABLED=1 NPM_CONFIG_UPDATE_NOTIFIER=false
# The npm the lockfile is written with (package.json "packageManager"); it also honours the
# lockfile's allowScripts policy.
RUN npm install --global npm@11.19.1
WORKDIR /src
COPY . .
RUN npm ci --no-audit --no-fund && npm run build
# What the runtime needs of the workspace: every workspace's package.json (so npm sees the
# workspaces the lockfile names) and the packages as built, without tests, benches or node_modules.
RUN mkdir /staging \
 && tar -c --exclude=node_modules --exclude='*.tsbuildinfo' --exclude='./packages/*/test' --exclude='./packages/*/bench' \
      package.json package-lock.json ./packages ./tools/*/package.json \
  | tar -x -C /staging

# deps: the production dependencies of @extlb/cli, exactly as the lockfile pins them.
FROM node:20.20.2-bookworm-slim AS deps
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
RUN npm install --global npm@11.19.1
WORKDIR /app
COPY --from=build /staging/ ./
RUN npm ci --omit=dev --workspace @extlb/cli --include-workspace-root=false --ignore-scripts --no-audit --no-fund

# runtime: Node, the built packages and their production dependencies; nothing else.
FROM node:20.20.2-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Owned by root: the process cannot change its own code (and runs with a read-only root filesystem
# in examples/deploy).
COPY --from=deps /app/ ./
# The image's `node` user, by number so that Kubernetes' runAsNonRoot can check it.
USER 1000:1000
ENTRYPOINT ["node", "/app/packages/cli/bin/extlb.js"]
CMD ["--help"]
