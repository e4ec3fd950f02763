#!/usr/bin/env bash
# Installs the Debian packages xlite builds with. Idempotent: does nothing when
# everything is already there.
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ clang llvm llvm-14-tools libclang-rt-14-dev
  libabsl-dev libgtest-dev libgmock-dev googletest libbenchmark-dev
  libzip-dev pkg-config
  liblapack-dev libblas-dev libdnnl-dev libkissfft-dev libgoogle-perftools-dev
  llvm-16-dev
  python3 python3-numpy
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
