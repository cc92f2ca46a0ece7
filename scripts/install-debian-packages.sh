#!/usr/bin/env bash
# Install the Debian packages the test suite needs (scripts/debian-packages.txt), if missing.
# Run by `make test` (and `make debian-packages`). As root it installs them with apt-get; as
# another user it uses sudo if that works without a password, and otherwise says which are
# missing (the tests that need them skip, saying so) and exits 0.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v dpkg-query >/dev/null 2>&1 || { echo "not a Debian system: Debian packages not installed"; exit 0; }
mapfile -t pkgs < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$here/debian-packages.txt" | grep -v '^$' || true)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]})) || exit 0
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
    if sudo -n true 2>/dev/null; then
        sudo_cmd=(sudo -n)
    else
        echo "not root: Debian packages missing (their tests will skip): ${missing[*]}"
        exit 0
    fi
fi
echo "installing Debian packages: ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -q
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
