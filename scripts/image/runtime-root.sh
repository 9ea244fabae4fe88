#!/usr/bin/env bash
# Run by the Dockerfile's build stage, after `npm run build` and `npm prune --omit=dev`: lays out in
# DEST the whole root filesystem of the runtime image, which starts from scratch. What the server
# runs and nothing else (no shell, no package manager):
#   /usr/local/bin/node   stripped of its debug symbols when `strip` is there (127 -> 109 MB)
#   the shared libraries node and better-sqlite3's addon load, as ldd names them, with the loader
#   /app                  package.json, schema.graphql, dist/src (no source maps or declarations),
#                         the production node_modules without what is never loaded: source maps,
#                         TypeScript declarations, Markdown, better-sqlite3's C sources and its
#                         addons for other platforms (licences stay)
#   /etc                  passwd and group naming root and nonroot (65532), the CA bundle
#   /tmp, /var/lib/capo-apiserver (the data volume, owned by 65532)
# Usage: runtime-root.sh DEST   (from the application's directory)
set -euo pipefail
dest=$1
mkdir -p "$dest/usr/local/bin" "$dest/app" "$dest/etc/ssl/certs" "$dest/tmp" "$dest/var/lib/capo-apiserver"
chmod 1777 "$dest/tmp"
chown 65532:65532 "$dest/var/lib/capo-apiserver"

node_binary=$(command -v node)
if command -v strip >/dev/null; then
  strip --strip-all -o "$dest/usr/local/bin/node" "$node_binary"
else
  echo "runtime-root: no strip in the build image (apt-get install binutils); node is copied with its debug symbols" >&2
  cp "$node_binary" "$dest/usr/local/bin/node"
fi

case "$(uname -m)" in x86_64) platform=linux-x64 ;; aarch64) platform=linux-arm64 ;; *) echo "runtime-root: unsupported $(uname -m)" >&2; exit 1 ;; esac
sqlite_addon=node_modules/better-sqlite3/prebuilds/$platform.node
[ -f "$sqlite_addon" ] || { echo "runtime-root: no $sqlite_addon" >&2; exit 1; }
# Each library at the path the loader resolved it to, the loader at its fixed one.
# (ldd given two files heads each list with the file's name and a colon: not a library.)
ldd "$node_binary" "$sqlite_addon" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\/.*[^:]$/ { print $1 }' | sort -u |
  while read -r library; do
    mkdir -p "$dest$(dirname "$library")"
    cp -L "$library" "$dest$library"
  done

cp package.json schema.graphql "$dest/app/"
mkdir -p "$dest/app/dist"
cp -r dist/src "$dest/app/dist/src"
cp -r node_modules "$dest/app/node_modules"
find "$dest/app" -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.md' -o -name '*.markdown' \) -delete
rm -rf "$dest/app/node_modules/better-sqlite3/deps" "$dest/app/node_modules/better-sqlite3/src"
find "$dest/app/node_modules/better-sqlite3/prebuilds" -type f ! -name "$platform.node" -delete

printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$dest/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$dest/etc/group"
cp /etc/ssl/certs/ca-certificates.crt "$dest/etc/ssl/certs/" 2>/dev/null ||
  echo "runtime-root: no /etc/ssl/certs/ca-certificates.crt in the build image; the runtime image has node's own CAs only" >&2
