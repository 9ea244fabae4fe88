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
ENTRYPOINT ["node", "--max-semi-space-size=16", "--heap-growing-percent=50", "--no-maglev", "--watch-path=/app/dist/src", "dist/src/main.js"]

# The image deploy/ runs (the default target). Node's flags are npm start's (package.json): V8's young
# generation capped at 32 MB (on a large host it grows to 128 MB, most of the server's memory at rest)
# and the old generation let grow by half its live size between collections instead of up to four
# times: 100-350 MB less at 10,000 objects for about 10% more CPU on writes. Maglev, V8's middle
# compiler tier (off in Node 20), is left off: the memory its compilations take from malloc stays in
# the process, 35-60 MB (BENCHMARKS.md). None of these flags is allowed in NODE_OPTIONS, so they
# are set here.
FROM runtime
USER 65532:65532
ENTRYPOINT ["node", "--max-semi-space-size=16", "--heap-growing-percent=50", "--no-maglev", "dist/src/main.js"]
