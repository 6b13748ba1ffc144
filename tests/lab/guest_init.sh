#!/bin/sh
# Stage 2 of the lab guest's boot: PID 1 after switch_root into the overlay of the host's / .
# The initramfs passes these from the kernel command line (see tests/lab/harness.py):
#   labpy   the host's Python (the venv interpreter), visible here at the same path
#   labsrc  the host's checkout of mdtui, visible here at the same path
#   labagent  the agent script (tests/lab/agent.py inside the checkout)
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8

say() { echo "lab-init: $*" >/dev/console; }
die() { say "FATAL: $*"; sleep 1; echo o >/proc/sysrq-trigger; sleep 30; }

mount -t proc proc /proc 2>/dev/null
mount -t sysfs sysfs /sys 2>/dev/null
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts 2>/dev/null
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs -o mode=0755 tmpfs /run
# No tmpfs over /tmp: the checkout may live under the host's /tmp (CI clones can), and the overlay's
# tmpfs upper layer already makes /tmp writable here.
mkdir -p /run/udev /run/mdadm /root
hostname mdtui-lab 2>/dev/null

mkdir -p /lab-out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 labout /lab-out || die "cannot mount /lab-out"

stage2=$(cut -d' ' -f1 /proc/uptime)

up() { cut -d' ' -f1 /proc/uptime; }

# Modules the lab never wants: slow to probe under TCG, or they would invent cpufreq or watchdogs;
# plus the storage drivers this machine has no disks for (q35 always has an AHCI controller).
wanted=" $(echo "$labmods" | tr ',' ' ') "
for m in kvm kvm_amd kvm_intel irqbypass ccp iTCO_wdt iTCO_vendor_support intel_pmc_bxt pcspkr \
    i2c_i801 lpc_ich psmouse serio_raw evdev joydev powernow_k8 acpi_cpufreq qemu_fw_cfg \
    ahci nvme mptsas virtio_blk; do
    case "$wanted" in *" $m "*) ;; *) echo "blacklist $m" ;; esac
done >/etc/modprobe.d/mdtui-lab.conf

# The agent's port driver first: the agent starts now, in parallel with udev (Python takes ~1.5 s
# to start under TCG), and answers the host's ping only once /run/mdtui-lab.ready exists.
modprobe virtio_console || say "virtio_console did not load"
cd "${labsrc:-/}" || die "no checkout at $labsrc"
"$labpy" -I -S "$labagent" "$labsrc" </dev/null >/dev/console 2>&1 &
agent_pid=$!

# The md personalities and this machine's block drivers ($labmods), in the background while udev
# starts (raid6_pq benchmarks its algorithms on load, ~1 s under TCG).
modprobe -a md_mod raid0 raid1 raid10 raid456 linear $wanted 2>/dev/console &
modprobe_pid=$!

/lib/systemd/systemd-udevd --daemon >/dev/null 2>&1 || say "systemd-udevd did not start"
udevadm trigger --action=add --type=subsystems
udevadm trigger --action=add --type=devices
wait "$modprobe_pid" || say "some modules failed to load"
udevadm settle --timeout=60 || say "udevadm settle timed out"
say "stage 2 began at ${stage2}s, modules and udev done at $(up)s"

# Opt-in network (Machine.forward_ports): QEMU user networking's fixed addresses on the virtio-net NIC.
if [ -n "$labnet" ]; then
    modprobe virtio_net || say "virtio_net did not load"
    udevadm settle --timeout=30
    ip link set lo up
    nic=$(ls /sys/class/net | grep -v '^lo$' | head -n 1)
    if [ -n "$nic" ]; then
        ip addr add 10.0.2.15/24 dev "$nic" && ip link set "$nic" up && ip route add default via 10.0.2.2 \
            || say "could not configure $nic"
    else
        say "labnet: no network interface"
    fi
fi

[ -n "$labstall" ] && { say "stalling $labstall s before the agent (labstall)"; sleep "$labstall"; }
touch /run/mdtui-lab.ready
wait "$agent_pid"
die "agent exited with status $?"
