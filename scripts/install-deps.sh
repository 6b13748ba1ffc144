#!/usr/bin/env bash
# Install everything mdtui's tests and lab need on a fresh Debian machine (run as root, or via sudo).
# Idempotent: packages already present are left alone, so CI and repeat runs stay fast.
set -euo pipefail

APT_PACKAGES=(
  mdadm fio busybox-static udev kmod pciutils util-linux coreutils
  qemu-system-x86 linux-image-amd64 sysstat tmux
)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # mdadm's postinst wants to write a config and may start a monitor; neither matters on a build host.
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
else
  echo "install-deps: all Debian packages present"
fi
