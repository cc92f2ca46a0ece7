#!/usr/bin/env bash
# Install Debian's ns-3 and build validation/ns3/build/ns3-dumbbell (run by `make ns3`).
# Idempotent: packages are installed only if missing, the binary is rebuilt only if stale.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$here/build"
bin="$build/ns3-dumbbell"
src="$here/dumbbell.cc"

# libns3-dev: headers, .so links and pkg-config files (ns3-*.pc).
# libgsl-dev, libsqlite3-dev: ns3-core.pc / ns3-stats.pc name libgsl.so, libgslcblas.so and
# libsqlite3.so directly, which only the -dev packages provide.
pkgs=(libns3-dev libgsl-dev libsqlite3-dev g++ pkg-config)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    sudo_cmd=()
    if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
    echo "installing: ${missing[*]}"
    "${sudo_cmd[@]}" apt-get update -q
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

mods=(ns3-core ns3-network ns3-internet ns3-point-to-point ns3-traffic-control ns3-applications)
version="$(pkg-config --modversion ns3-core)"

if [[ -x "$bin" && "$bin" -nt "$src" && "$bin" -nt "$0" ]]; then
    echo "ns3-dumbbell is up to date (ns-3 $version): $bin"
    exit 0
fi

mkdir -p "$build"
# Debian's .pc files carry a stray "-I/usr;" and include dirs for python/libxml2 we do not use:
# keep only the include flags that exist.
cflags=()
for f in $(pkg-config --cflags "${mods[@]}"); do
    d="${f#-I}"; d="${d%\\;}"; d="${d%;}"
    [[ "$f" == -I* && -d "$d" ]] && cflags+=("-I$d")
done
# --no-as-needed: ns-3 registers TypeIds in static constructors of each library; a library whose
# symbols are only reached through the TypeId system must still be linked.
echo "building $bin against ns-3 $version"
g++ -std=c++17 -O2 -DNDEBUG -DNS3_PKG_VERSION="\"$version\"" "${cflags[@]}" \
    -o "$bin.tmp" "$src" \
    -Wl,--no-as-needed $(pkg-config --libs "${mods[@]}")
mv "$bin.tmp" "$bin"
echo "built $bin"
