#!/usr/bin/env bash
# Install the Debian packages mdtui needs on a fresh machine (run as root, or with sudo available).
#   install-deps.sh          runtime: mdadm, fio, util-linux, sysstat, smartmontools, python3-venv
#   install-deps.sh --lab    runtime + the QEMU lab: qemu-system-x86, a Debian kernel, initramfs-tools, busybox, udev
# Idempotent: packages already present are left alone, so CI and repeat runs stay fast.
set -euo pipefail

RUNTIME=(mdadm fio util-linux coreutils sysstat smartmontools python3 python3-venv python3-pip)
LAB=(qemu-system-x86 linux-image-amd64 initramfs-tools busybox-static udev kmod pciutils lvm2 e2fsprogs tmux)

packages=("${RUNTIME[@]}")
if [ "${1:-}" = "--lab" ]; then packages+=("${LAB[@]}"); fi

missing=()
for pkg in "${packages[@]}"; do
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
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
else
  echo "install-deps: all Debian packages present"
fi
