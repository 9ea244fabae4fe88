#!/usr/bin/env bash
# Makes the image build's Node.js base where no registry serves one (these machines reach Debian's
# packages and the npm registry, not an image registry): Debian bookworm from debootstrap (minbase),
# Node.js 24 from the npm registry's node-linux-<arch> package (the version scripts/use-node.sh
# pins), npm from the npm registry, binutils (the Dockerfile strips node for the runtime stage), and
# this machine's CA bundle with NODE_EXTRA_CA_CERTS pointing at it, so the build's `npm ci` also
# works behind a proxy that re-signs TLS. Imported into podman as $BASE_IMAGE.
#
# With a registry none of this is needed: the Dockerfile's NODE_IMAGE defaults to the official
# node:24-bookworm-slim.
#
# The root filesystem is kept as a tarball in ~/.cache/capo-image, keyed by this script's content,
# so a machine that made it once imports it again in seconds.
# Usage: scripts/image/base.sh   (prints the image name on its last line)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
node_version=$(sed -n 's/^capo_node_version=//p' "$here/../use-node.sh")
npm_version=11.19.1
case "$(uname -m)" in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) echo "base.sh: no Node.js package for $(uname -m)" >&2; exit 1 ;; esac
BASE_IMAGE=${BASE_IMAGE:-localhost/capo-apiserver-base:node-$node_version}
ca_bundle=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/capo-image
key=$( (cat "$0"; echo "$node_version $npm_version $arch"; cat "$ca_bundle") | sha256sum | cut -c1-16)
tarball=$cache/base-$key.tar

for tool in podman debootstrap npm; do
  command -v "$tool" >/dev/null || { echo "base.sh: needs $tool (apt-get install podman debootstrap npm)" >&2; exit 1; }
done

if podman image exists "$BASE_IMAGE" && [ "$(podman image inspect --format '{{index .Labels "capo.base-key"}}' "$BASE_IMAGE" 2>/dev/null)" = "$key" ]; then
  echo "$BASE_IMAGE"; exit 0
fi

if [ ! -f "$tarball" ]; then
  mkdir -p "$cache"
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  echo "base.sh: debootstrap bookworm (minbase) into $root" >&2
  mkdir -p "$cache/debs"
  debootstrap --variant=minbase --include=binutils,ca-certificates --cache-dir="$cache/debs" bookworm "$root" http://deb.debian.org/debian >&2
  echo "base.sh: Node.js $node_version and npm $npm_version from the npm registry" >&2
  fetched=$(mktemp -d)
  (cd "$fetched" && npm pack --silent "node-linux-$arch@$node_version" "npm@$npm_version" >/dev/null)
  tar -xzf "$fetched"/node-linux-*.tgz --strip-components=1 -C "$root/usr/local" package/bin/node package/include
  mkdir -p "$root/usr/local/lib/node_modules/npm"
  tar -xzf "$fetched"/npm-*.tgz --strip-components=1 -C "$root/usr/local/lib/node_modules/npm"
  rm -rf "$fetched"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  install -m 0644 "$ca_bundle" "$root/usr/local/share/ca-bundle.crt"
  # Leave out what a build never reads: apt's lists and caches, documentation.
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc "$root"/usr/share/man
  tar --numeric-owner -C "$root" -cf "$tarball.partial" .
  mv "$tarball.partial" "$tarball"
fi

podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-bundle.crt' \
  --change "LABEL capo.base-key=$key" \
  --change 'CMD ["node"]' \
  "$tarball" "$BASE_IMAGE" >&2
echo "$BASE_IMAGE"
