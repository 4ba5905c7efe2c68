#!/usr/bin/env bash
# Installs the Debian packages knit dev's image tests use, when missing:
# runc (the engine knit dev runs images with, and BuildKit's worker),
# busybox-static (the shell the tests' images carry) and
# containernetworking-plugins (the CNI loopback plugin that gives a
# dockerfile:// build's RUN steps a network namespace of their own), and
# the packages named as arguments: make bench adds nginx (the reference
# edge proxy knit's ingress is measured against side by side), which make
# test never installs (its package may start a server on port 80, where
# knit dev's replica gateways listen). Only as root on a Debian-like
# system; elsewhere the tests that need them skip, saying why, and make
# bench leaves nginx's cells out.
set -euo pipefail
[ "$(uname -s)" = Linux ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || exit 0
PKGS=(runc busybox-static containernetworking-plugins "$@")
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
((${#missing[@]})) || exit 0
echo "apt-get install ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
