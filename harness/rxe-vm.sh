#!/bin/bash
# The project's copy of the team's Soft-RoCE harness (shared/tools/rxe-vm.sh), so a fresh clone runs its RDMA
# tests with nothing but its own files. See README.md, "RDMA without a NIC".
# rxe-vm.sh CMD [ARGS...]
#
# Runs CMD inside a throw-away User-Mode-Linux (UML) guest kernel that has
# Soft-RoCE (rdma_rxe) built in, with real ibverbs.  Why UML and not KVM: this
# host's /dev/kvm is "kvm_pvm" (Pagetable-based VM, no VT-x/SVM underneath), which
# runs only PVM-aware guest kernels; a stock Debian kernel is emulated instruction
# by instruction (~1000x slow) and hangs in early boot (see rxe-kvm-attempt.sh).
# UML needs no virtualization at all: the guest kernel is an ordinary host process.
#
# The guest's root is the HOST's root filesystem (hostfs, mounted read-only) with a
# tmpfs overlay on top (guest writes vanish at exit), so the host's java, mvn,
# build outputs, rdma-core, perftest ... are usable as-is. Device "rxe0" sits on a
# guest-internal dummy netdev; the guest has no network device to the host at all.
# Exit status = CMD's exit status (124 on timeout, 125 on guest/setup failure).
#
# Knobs (environment):
#   RXE_VM_MEM=4G            guest RAM (UML is uniprocessor: 1 vCPU)
#   RXE_VM_TIMEOUT=900       seconds for the whole guest run
#   RXE_VM_RW=dir1:dir2      host dirs shared READ-WRITE at the same path (default: $PWD
#                            unless $PWD is /); everything else is read-only + overlay
#   RXE_VM_ENV="V1 V2"       extra env vars passed to CMD (PATH HOME LANG LC_ALL TZ
#                            JAVA_HOME MAVEN_OPTS CI TERM always are)
#   RXE_VM_IP=10.77.0.1/24   address of the guest-internal dummy netdev under rxe0
#   RXE_VM_KEEP=1            keep the per-run dir (console.log = guest kernel log)
#   RXE_VM_NIC=1             NIC-like mode, for measurements: the netdev under rxe0 at MTU 9000 (rxe's port then
#                            runs at 4096) and rxe's software ICRC off (rxe-icrc-param.patch adds the switch; a NIC
#                            computes the CRC in hardware), on a kernel of its own with 64 KiB kernel stacks (UML's
#                            interrupt stack holds 16,640-byte register frames with the xstate patch; two nested
#                            network interrupts overflowed 32 KiB) and UML's vector network driver (with deep
#                            raw-socket queues, uml-vector-rawsock.patch) for two guests as two hosts. Built once
#                            beside the default kernel, cached.
# CMD's stdout/stderr arrive on this script's stdout/stderr; CMD's stdin is /dev/null.
# The guest has ONE vCPU (UML); busy-polling two-sided ping-pong (ib_send_lat, ib_write_lat,
# ibv_rc_pingpong without -e) costs a 10 ms scheduler tick per hop: use event mode (-e).
# UML has no vDSO fast path: every clock read is a trapped system call (~65 us in the guest),
# and gettimeofday() is jittery, which perftest calibrates against. RXE_VM_TSC_CLOCK=1 runs CMD
# with LD_PRELOAD=$LAB/uml/libtsctime.so (tsc-time.c, built by this script): clock_gettime and
# gettimeofday answered from the TSC, as a Linux host's vDSO does. Use it for measurements.
set -euo pipefail
LAB=${RXE_LAB:-${XDG_CACHE_HOME:-$HOME/.cache}/rxe-vm}
UML="$LAB/uml/linux"
NIC=${RXE_VM_NIC:-0}
UML_NIC="$LAB/uml-nic/linux"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# What the cached kernel was built from; a kernel built from an older recipe is rebuilt (incrementally).
# 2: the host's own XSTATE size (uml-host-xstate.patch) and 32 KiB kernel stacks to hold the larger FP area.
RECIPE="2 $(sha256sum < "$HERE/uml-host-xstate.patch" | cut -c1-16)"
NIC_RECIPE="nic 2 $(cat "$HERE/rxe-icrc-param.patch" "$HERE/uml-vector-rawsock.patch" | sha256sum | cut -c1-16) $RECIPE"
mkdir -p "$LAB/runs" "$LAB/uml"
die() { echo "rxe-vm: $*" >&2; exit 125; }
[ $# -ge 1 ] || die "usage: $0 CMD [ARGS...]"

# ------------------------------------------------ one-time setup (idempotent, locked)
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends "$@" >&2 ||
    { apt-get update >&2 && apt-get install -y --no-install-recommends "$@" >&2; } ||
    die "apt-get install $* failed"
}
setup() {
  local need=() p
  for p in rdma-core ibverbs-utils ibverbs-providers librdmacm1 rdmacm-utils perftest \
           libibverbs-dev iproute2; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
  done
  [ ${#need[@]} -eq 0 ] || apt_install "${need[@]}"
  if [ ! -x "$UML" ] || [ "$(cat "$UML.recipe" 2>/dev/null)" != "$RECIPE" ]; then
    # build a UML kernel from Debian's linux-source-6.1 with RDMA_RXE built in
    need=()
    for p in gcc make flex bison bc libc6-dev xz-utils patch; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
    [ ${#need[@]} -eq 0 ] || apt_install "${need[@]}"
    local src; src=$(ls -d "$LAB"/src/linux-source-*/ 2>/dev/null | head -1 || true)
    if [ -z "$src" ]; then
      local spkg; spkg=$(apt-cache depends linux-source 2>/dev/null | awk '/Depends: linux-source-/{print $2}' | head -1 || true)
      [ -n "$spkg" ] || { apt-get update >&2; spkg=$(apt-cache depends linux-source | awk '/Depends: linux-source-/{print $2}' | head -1 || true); }
      [ -n "$spkg" ] || die "cannot resolve linux-source"
      local d; d=$(mktemp -d "$LAB/dl.XXXXXX")
      (cd "$d" && apt-get download "$spkg" >&2) || die "apt-get download $spkg failed"
      mkdir -p "$LAB/src"
      dpkg-deb --fsys-tarfile "$d"/*.deb | tar -xO --wildcards '*/linux-source-*.tar.xz' | tar -xJ -C "$LAB/src"
      rm -rf "$d"; src=$(ls -d "$LAB"/src/linux-source-*/ | head -1)
    fi
    # UML 6.1 saves a task's FP registers in a fixed 2696-byte area and hands the host exactly that much; a host
    # whose XSTATE is larger (AMX: 11008 bytes) refuses it with EFAULT and the guest's init dies at its first exec
    # ("ptrace set fp regs failed, errno = 14"). The patch sizes the transfer from the host at boot.
    if ! patch -d "$src" -p1 -R -s -f --dry-run < "$HERE/uml-host-xstate.patch" >/dev/null 2>&1; then
      patch -d "$src" -p1 -N -s < "$HERE/uml-host-xstate.patch" >&2 || die "cannot apply uml-host-xstate.patch"
    fi
    local b="$LAB/uml-build"; mkdir -p "$b"
    echo "rxe-vm: building UML kernel in $b (one-time, ~30 min on 2 cores)" >&2
    make -s ARCH=um -C "$src" O="$b" defconfig >&2
    "$src/scripts/config" --file "$b/.config" -e VIRTIO_UML -e UML_PCI_OVER_VIRTIO \
      -e NET -e INET -e IPV6 -e INFINIBAND -e INFINIBAND_USER_ACCESS -e INFINIBAND_USER_MAD \
      -e RDMA_RXE -e DUMMY -e VETH -e HOSTFS -e OVERLAY_FS -e TMPFS -e DEVTMPFS \
      -e DEVTMPFS_MOUNT -e UNIX -e PACKET -e NET_UDP_TUNNEL -e CONFIGFS_FS -e FUTEX -e EPOLL \
      -e SIGNALFD -e TIMERFD -e EVENTFD -e AIO -e SYSVIPC -e POSIX_MQUEUE -e PROC_FS -e SYSFS \
      -e MAGIC_SYSRQ -e BINFMT_ELF -e BINFMT_SCRIPT -e UNIX98_PTYS -e DEVPTS_FS -d MODULES \
      -e SSL -e NULL_CHAN -e PORT_CHAN -e PTY_CHAN -e TTY_CHAN -e XTERM_CHAN -e MEMFD_CREATE \
      -e SHMEM -e CGROUPS -e NAMESPACES -e PROC_SYSCTL -e INFINIBAND_ADDR_TRANS \
      -e INFINIBAND_ON_DEMAND_PAGING -d STATIC_LINK --set-val KERNEL_STACK_ORDER 3
    make -s ARCH=um -C "$src" O="$b" olddefconfig >&2
    grep -q '^CONFIG_RDMA_RXE=y' "$b/.config" || die "RDMA_RXE not selectable for UML"
    make -s ARCH=um -C "$src" O="$b" -j"$(nproc)" linux >&2 || die "UML kernel build failed"
    cp "$b/linux" "$UML.tmp" && mv "$UML.tmp" "$UML"
    echo "$RECIPE" > "$UML.recipe"
  fi
  if [ "$NIC" = 1 ] && { [ ! -x "$UML_NIC" ] || [ "$(cat "$UML_NIC.recipe" 2>/dev/null)" != "$NIC_RECIPE" ]; }; then
    # The NIC-like kernel: the default one's source and configuration, plus the ICRC switch and 64 KiB stacks, in a
    # source tree of its own (the default kernel stays as it is).
    local base; base=$(ls -d "$LAB"/src/linux-source-*/ | head -1); base=${base%/}
    local nsrc="$LAB/src-nic/$(basename "$base")"
    [ -d "$nsrc" ] || { mkdir -p "$LAB/src-nic" && cp -a "$base" "$nsrc"; } || die "cannot copy $base"
    local p
    for p in rxe-icrc-param.patch uml-vector-rawsock.patch; do
      if ! patch -d "$nsrc" -p1 -R -s -f --dry-run < "$HERE/$p" >/dev/null 2>&1; then
        patch -d "$nsrc" -p1 -N -s < "$HERE/$p" >&2 || die "cannot apply $p"
      fi
    done
    local nb="$LAB/uml-nic-build"; mkdir -p "$nb" "$LAB/uml-nic"
    echo "rxe-vm: building the NIC-like UML kernel in $nb (one-time, ~15 min on 2 cores)" >&2
    cp "$LAB/uml-build/.config" "$nb/.config"
    # The vector network driver (raw sockets over a veth pair) links two guests as two hosts (rxe-2hosts.sh).
    "$nsrc/scripts/config" --file "$nb/.config" --set-val KERNEL_STACK_ORDER 4 -e UML_NET -e UML_NET_VECTOR
    make -s ARCH=um -C "$nsrc" O="$nb" olddefconfig >&2
    make -s ARCH=um -C "$nsrc" O="$nb" -j"$(nproc)" linux >&2 || die "NIC-like UML kernel build failed"
    cp "$nb/linux" "$UML_NIC.tmp" && mv "$UML_NIC.tmp" "$UML_NIC"
    echo "$NIC_RECIPE" > "$UML_NIC.recipe"
  fi
  # clock reads from the TSC for programs in the guest (see tsc-time.c), rebuilt when its source changes
  if [ ! -s "$LAB/uml/libtsctime.so" ] || [ "$HERE/tsc-time.c" -nt "$LAB/uml/libtsctime.so" ]; then
    gcc -O2 -shared -fPIC -o "$LAB/uml/libtsctime.so.tmp" "$HERE/tsc-time.c" &&
      mv "$LAB/uml/libtsctime.so.tmp" "$LAB/uml/libtsctime.so" || die "cannot build tsc-time.c"
  fi
  # PID 1 of the guest (a host bash script; the guest's / is the host's / read-only)
  cat > "$LAB/uml/init.tmp" <<'EOF'
#!/bin/bash
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
RUN=$rxerun
fail() { echo "rxe-vm init: $*" >&2; echo 125 > $N$RUN/rc 2>/dev/null; sync; echo o > /proc/sysrq-trigger; sleep 10; }
mount -t proc proc /proc; mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/ovl/u /run/ovl/w /run/ovl/root; N=/run/ovl/root
mount -t overlay overlay -o lowerdir=/,upperdir=/run/ovl/u,workdir=/run/ovl/w $N || fail overlay
mount -t hostfs none $N$RUN -o "$RUN" || fail "hostfs $RUN"
while read -r path; do
  [ -n "$path" ] && { mount -t hostfs none "$N$path" -o "$path" || fail "hostfs $path"; }
done < "$RUN/shares"
mount -t proc proc $N/proc; mount -t sysfs sysfs $N/sys; mount -t devtmpfs devtmpfs $N/dev
mkdir -p $N/dev/pts $N/dev/shm; mount -t devpts devpts $N/dev/pts; mount -t tmpfs tmpfs $N/dev/shm
mount -t tmpfs -o mode=0755 tmpfs $N/run
# UML's /proc/cpuinfo has no "cpu MHz" line; perftest needs it to convert TSC cycles
# (rdtsc runs natively on the host CPU), so expose the host's TSC MHz there.
if [ -s "$RUN/cpumhz" ]; then
  sed "/^bogomips/i cpu MHz\t\t: $(cat "$RUN/cpumhz")" /proc/cpuinfo > /run/cpuinfo
  mount --bind /run/cpuinfo $N/proc/cpuinfo
fi
stty -F /dev/ttyS0 raw -echo 2>/dev/null; stty -F /dev/ttyS1 raw -echo 2>/dev/null
chroot $N /bin/bash "$RUN/stage2" </dev/null >/dev/ttyS0 2>/dev/ttyS1
echo $? > $N$RUN/rc
sync; sleep 0.2; echo o > /proc/sysrq-trigger; sleep 10
EOF
  chmod +x "$LAB/uml/init.tmp"; mv "$LAB/uml/init.tmp" "$LAB/uml/init"
}
exec 9>"$LAB/.setup.lock"; flock 9; setup; flock -u 9; exec 9>&-

# ------------------------------------------------ per-run
# UML backs guest memory with host mappings, many per GiB the guest touches. At the host's default
# vm.max_map_count (65530) a guest process that touches a few GiB (64 MiB Arrow batches over three transports) is
# SIGKILLed, and the console says "UML ran out of memory on the host side". Raise the limit where allowed.
want_maps=1048576
maps=$(cat /proc/sys/vm/max_map_count 2>/dev/null || echo "$want_maps")
if [ "$maps" -lt "$want_maps" ] && ! { echo "$want_maps" > /proc/sys/vm/max_map_count; } 2>/dev/null; then
  echo "rxe-vm: vm.max_map_count is $maps and cannot be raised here; a guest process that touches a few GiB" \
       "may be killed (sysctl -w vm.max_map_count=$want_maps as root avoids it)" >&2
fi
[ "$NIC" = 1 ] && UML="$UML_NIC"
RUN=$(mktemp -d "$LAB/runs/run.XXXXXX")
case "$RUN" in *[[:space:]]*) die "LAB path must not contain spaces";; esac
cleanup() {
  # UML leaves helper processes behind when the guest ends abnormally, in a process group of their own (UML calls
  # setsid, so timeout's group kill misses them): both groups go.
  [ -n "${UMLPID:-}" ] && kill -KILL -- "-$UMLPID" 2>/dev/null || true
  [ -n "${TPID:-}" ] && kill -KILL -- "-$TPID" 2>/dev/null || true
  [ "${RXE_VM_KEEP:-0}" = 1 ] || rm -rf "$RUN"
}
trap cleanup EXIT
: > "$RUN/shares"
awk -F: '/^cpu MHz/{gsub(/[ \t]/,"",$2); print $2; exit}' /proc/cpuinfo > "$RUN/cpumhz" || true
RW=${RXE_VM_RW-$PWD}; [ "$RW" = / ] && RW=
IFS=: read -r -a rwdirs <<< "$RW"
for d in "${rwdirs[@]}"; do
  [ -n "$d" ] || continue; d=$(cd "$d" && pwd -P) || die "no dir $d"
  printf '%s\n' "$d" >> "$RUN/shares"
done
{ echo '#!/bin/bash'
  echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
  echo 'hostname rxe-guest; ip link set lo up'
  echo 'ip link add rxenet0 type dummy && ip link set rxenet0 up || exit 125'
  [ "$NIC" = 1 ] && echo 'ip link set rxenet0 mtu 9000 || exit 125'
  printf 'ip addr add %q dev rxenet0 || exit 125\n' "${RXE_VM_IP:-10.77.0.1/24}"
  echo 'rdma link add rxe0 type rxe netdev rxenet0 || exit 125'
  echo 'for i in $(seq 200); do grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null && break; sleep 0.05; done'
  [ "$NIC" = 1 ] && echo 'echo 0 > /sys/module/rdma_rxe/parameters/icrc || exit 125'
  echo 'ulimit -l unlimited'
  [ "${RXE_VM_TSC_CLOCK:-0}" = 1 ] && printf 'export LD_PRELOAD=%q\n' "$LAB/uml/libtsctime.so"
  for v in PATH HOME LANG LC_ALL TZ JAVA_HOME MAVEN_OPTS CI TERM ${RXE_VM_ENV:-}; do
    [ -n "${!v+x}" ] && printf 'export %s=%q\n' "$v" "${!v}"
  done
  printf 'cd %q 2>/dev/null || cd /\n' "$PWD"
  printf 'exec'; printf ' %q' "$@"; echo
} > "$RUN/stage2"

mkfifo "$RUN/out" "$RUN/err"
cat "$RUN/out" & C1=$!
cat "$RUN/err" >&2 & C2=$!
# timeout runs UML in its own process group and kills the whole group (UML's
# userspace helper processes included) on expiry; forward ^C/TERM to it as well.
trap '[ -n "${TPID:-}" ] && kill -TERM "$TPID" 2>/dev/null; exit 130' INT TERM
set +e
TMPDIR=/dev/shm timeout -k 5 "${RXE_VM_TIMEOUT:-900}" "$UML" \
  mem="${RXE_VM_MEM:-4G}" rootfstype=hostfs rootflags=/ ro init="$LAB/uml/init" \
  rxerun="$RUN" uml_dir="$RUN" umid=uml quiet \
  con=null con0=null,fd:3 ssl=null ssl0=null,fd:4 ssl1=null,fd:5 \
  3>"$RUN/console.log" 4>"$RUN/out" 5>"$RUN/err" </dev/null &
TPID=$!
# UML's own process (the leader of its session and process group), for the clean-up.
for _ in $(seq 50); do UMLPID=$(pgrep -P "$TPID" 2>/dev/null | head -1 || true); [ -n "$UMLPID" ] && break; sleep 0.1; done
wait $TPID; urc=$?
set -e
wait $C1 $C2  # let the output relays drain
if [ -s "$RUN/rc" ]; then exit "$(cat "$RUN/rc")"; fi
[ $urc = 124 ] && { echo "rxe-vm: timeout after ${RXE_VM_TIMEOUT:-900}s" >&2; exit 124; }
echo "rxe-vm: guest died without a result (uml rc=$urc); console tail:" >&2
tail -30 "$RUN/console.log" >&2
exit 125
