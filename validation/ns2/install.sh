#!/usr/bin/env bash
# Install Debian's ns-2.35 (package `ns2`) if missing (run by `make ns2`). Nothing else is built:
# the cross-check's scripts are the project's own Tcl (validation/ns2/dumbbell.tcl).
set -euo pipefail

if ! dpkg-query -W -f='${Status}' ns2 2>/dev/null | grep -q "install ok installed"; then
    sudo_cmd=()
    if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
    echo "installing: ns2"
    "${sudo_cmd[@]}" apt-get update -q
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends ns2
fi
echo "ns-2 $(dpkg-query -W -f='${Version}' ns2): $(command -v ns)"
