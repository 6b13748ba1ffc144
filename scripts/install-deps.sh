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

# Runs apt-get with its output shown as it comes; when it fails, the last line said names the fix.
apt_step() {
  local log status
  log="$(mktemp)"
  set +e
  $SUDO apt-get "$@" </dev/null 2>&1 | tee "$log" >&2
  status="${PIPESTATUS[0]}"
  set -e
  if [ "$status" -ne 0 ]; then
    echo "install-deps: $(apt_fix "$log" "$status")" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
}

# One line naming what to do about a failed apt-get, from what it said.
apt_fix() {
  local log="$1" status="$2" said
  if grep -q "dpkg was interrupted" "$log"; then
    echo "apt-get failed: dpkg was interrupted; run 'sudo dpkg --configure -a', then run this again"
  elif grep -qE "Unmet dependencies|--fix-broken|held broken packages" "$log"; then
    echo "apt-get failed (unmet dependencies); run 'sudo apt --fix-broken install', then run this again"
  else
    said="$(grep -E '^(E|Err):' "$log" | tail -n 1)"
    echo "apt-get failed (exit $status): ${said:-no error message}; fix that, then run this again"
  fi
}

if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt_step update -qq
  apt_step install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi
