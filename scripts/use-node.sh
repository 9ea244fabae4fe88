# Sourced before npm (`. scripts/use-node.sh && npm ci && npm test`): puts Node.js 24 LTS on PATH.
#
# When the machine's node is older (Debian ships 20, past its end of life), Node 24 comes from the
# npm registry's node-linux-<arch> package (bin/node with its headers) into
# ${XDG_CACHE_HOME:-~/.cache}/capo-node/<version>; later runs reuse it. Nothing needs compiling:
# better-sqlite3 13 ships Node-API builds for every platform we run on.

capo_node_version=24.21.0

capo_use_node() {
  local major
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$major" -lt 24 ]; then
    local arch dir tmp
    case "$(uname -m)" in
      x86_64) arch=x64 ;;
      aarch64) arch=arm64 ;;
      *) echo "use-node: no Node.js registry package for $(uname -m); install Node.js 24 yourself" >&2; return 1 ;;
    esac
    dir="${XDG_CACHE_HOME:-$HOME/.cache}/capo-node/$capo_node_version"
    if [ ! -x "$dir/bin/node" ]; then
      echo "use-node: fetching Node.js $capo_node_version (node-linux-$arch) from the npm registry into $dir" >&2
      tmp=$(mktemp -d) || return 1
      if ! (cd "$tmp" && npm pack --silent "node-linux-$arch@$capo_node_version" >/dev/null \
          && mkdir -p "$dir" && tar -xzf node-linux-*.tgz --strip-components=1 -C "$dir"); then
        rm -rf "$tmp"
        echo "use-node: could not fetch node-linux-$arch@$capo_node_version" >&2
        return 1
      fi
      rm -rf "$tmp"
    fi
    PATH="$dir/bin:$PATH"
    export PATH
  fi
}

capo_use_node
