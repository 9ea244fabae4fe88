# capo-apiserver's image for deploy/: built with the npm commands CI runs, shipped with only what
# the server runs (node and the libraries it loads, dist/src, production dependencies,
# schema.graphql) on an empty root, as a non-root user on a read-only root filesystem (the data
# directory is a volume).
#
# NODE_IMAGE is the build stage's Node.js 24 image: the official one where a registry serves it;
# where none does, scripts/image/build.sh makes one from Debian's packages and the npm registry
# (scripts/image/base.sh) and passes it here.
ARG NODE_IMAGE=node:24-bookworm-slim
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY scripts/use-node.sh scripts/
RUN . scripts/use-node.sh && npm ci
COPY . .
RUN . scripts/use-node.sh && npm run build && npm prune --omit=dev && scripts/image/runtime-root.sh /rootfs

# What scripts/image/runtime-root.sh laid out, and nothing else: no shell, no package manager.
FROM scratch AS runtime
COPY --from=build /rootfs /
WORKDIR /app
ENV NODE_ENV=production PATH=/usr/local/bin
EXPOSE 6443
VOLUME ["/var/lib/capo-apiserver"]
CMD ["--data-dir=/var/lib/capo-apiserver", "--bind-address=0.0.0.0"]

# The Tilt dev loop's image (Tiltfile, cluster mode): the server under `node --watch`, its compiled
# output writable by its user, so Tilt syncs a new build in and the process restarts. On the
# Node.js image, not the empty root: Tilt's live update copies files in with tar through a shell.
FROM ${NODE_IMAGE} AS dev
COPY --from=build --chown=65532:65532 /rootfs/app /app
WORKDIR /app
ENV NODE_ENV=production
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
