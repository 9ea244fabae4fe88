#!/usr/bin/env bash
# Builds capo-apiserver's image with podman (or docker: CONTAINER_ENGINE=docker) from the
# repository's Dockerfile. The build stage's Node.js image is NODE_IMAGE when given (the official
# node:24-bookworm-slim, or a mirror of it); otherwise scripts/image/base.sh makes one locally from
# Debian's packages and the npm registry, for machines that no image registry serves.
# Usage: scripts/image/build.sh [IMAGE [TARGET]]   (IMAGE defaults to localhost/capo-apiserver:<version>;
#        TARGET is a Dockerfile stage, e.g. dev for the Tilt loop's image). Prints IMAGE on its last line.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
engine=${CONTAINER_ENGINE:-podman}
version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$root/package.json")
image=${1:-localhost/capo-apiserver:$version}
target=${2:-}
node_image=${NODE_IMAGE:-$("$root/scripts/image/base.sh" | tail -n 1)}
args=(build --network=host --build-arg "NODE_IMAGE=$node_image" -t "$image")
[ -n "$target" ] && args+=(--target "$target")
"$engine" "${args[@]}" "$root" >&2
echo "$image"
