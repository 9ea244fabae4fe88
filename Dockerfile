# capo-apiserver's image for deploy/: built with the npm commands CI runs, shipped with only what
# the server runs (dist/src, production dependencies, schema.graphql), as a non-root user on a
# read-only root filesystem (the data directory is a volume).
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY scripts/use-node.sh scripts/
RUN . scripts/use-node.sh && npm ci
COPY . .
RUN . scripts/use-node.sh && npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production
# V8's young generation capped as npm start caps it (package.json): on a large host V8 lets it grow to
# 128 MB, most of the server's memory at rest; 32 MB costs no measured throughput (BENCHMARKS.md).
ENV NODE_OPTIONS=--max-semi-space-size=16
COPY --from=build /src/package.json /src/schema.graphql ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist/src ./dist/src
EXPOSE 6443
VOLUME ["/var/lib/capo-apiserver"]
CMD ["--data-dir=/var/lib/capo-apiserver", "--bind-address=0.0.0.0"]

# The Tilt dev loop's image (Tiltfile, cluster mode): the server under `node --watch`, its compiled
# output writable by its user, so Tilt syncs a new build in and the process restarts.
FROM runtime AS dev
RUN chown -R 65532:65532 /app/dist
USER 65532:65532
ENTRYPOINT ["node", "--watch-path=/app/dist/src", "dist/src/main.js"]

# The image deploy/ runs (the default target).
FROM runtime
USER 65532:65532
ENTRYPOINT ["node", "dist/src/main.js"]
