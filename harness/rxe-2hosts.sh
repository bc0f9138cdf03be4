#!/bin/bash
# Two Soft-RoCE guests as two hosts on a private link:
#   harness/rxe-2hosts.sh 'SERVER_CMD' 'CLIENT_CMD'
# Guest A (10.77.0.1) runs SERVER_CMD, guest B (10.77.0.2) CLIENT_CMD, each with `bash -c`, each its own UML
# kernel process (one vCPU each: the host's two cores run them side by side) with its own rxe0 on an Ethernet
# interface, vec0. The link is a veth pair in a private network namespace made for the run and gone after it
# (nothing touches the host's interfaces; no packet leaves the machine); each guest's vector driver reads and
# writes its end with raw sockets. Inside: SELF and PEER hold the two addresses.
#
# The guests run the NIC-like kernel of harness/rxe-vm.sh (RXE_VM_NIC=1: 64 KiB stacks, vector driver, ICRC
# switch), built on first use; the default kernel's 32 KiB stacks overflow under network interrupts. Guest setup as
# rxe-vm.sh: the host's root read-only with a tmpfs overlay, $PWD shared read-write, stdin /dev/null, TSC clock.
# Knobs: TWO_MTU=1500 (link MTU; 9000 lets rxe run at 4096), TWO_ICRC=1 (0: rxe's ICRC off in both guests),
# TWO_MEM=3G per guest, TWO_TIMEOUT=900 s for the whole run, TWO_KEEP=1 (keep the run dir: a.console, b.console).
# A client retries until its server listens. Output: A's then B's stdout/stderr, prefixed "A| " and "B| ".
# Exit status: B's (124 on timeout, 125 on setup failure); A gets 10 s after B ends, then is killed.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB=${RXE_LAB:-${XDG_CACHE_HOME:-$HOME/.cache}/rxe-vm}
die() { echo "rxe-2hosts: $*" >&2; exit 125; }
[ $# -eq 2 ] || die "usage: $0 'SERVER_CMD' 'CLIENT_CMD'"
MTU=${TWO_MTU:-1500}

if [ "${TWO_INSIDE:-}" != 1 ]; then
  # The NIC-like kernel and the guest init, built or refreshed by rxe-vm.sh itself.
  RXE_VM_NIC=1 RXE_VM_TIMEOUT=120 "$HERE/rxe-vm.sh" true || die "the NIC-like guest does not start"
  export TWO_INSIDE=1
  namespace=(unshare --net); [ "$(id -u)" = 0 ] || namespace=(unshare --user --map-root-user --net)
  # Where namespaces are not allowed (some containers), that is a setup failure, not a failed run.
  "${namespace[@]}" true 2>/dev/null || die "cannot make a private network namespace here (${namespace[*]})"
  exec "${namespace[@]}" -- "$0" "$@"
fi
UML="$LAB/uml-nic/linux"
[ -x "$UML" ] && [ -x "$LAB/uml/init" ] || die "no NIC-like kernel under $LAB"

ip link set lo up
ip link add two-a type veth peer name two-b || die "cannot create a veth pair"
for g in a b; do ip link set "two-$g" mtu "$MTU" up; done

RUN=$(mktemp -d "$LAB/runs/two.XXXXXX")
cleanup() {
  # Each guest's kernel is the session leader of its host processes: the group goes with it.
  local p; for p in ${PIDS:-}; do kill -KILL -- "-$p" 2>/dev/null || true; done
  [ -n "${WATCH:-}" ] && kill "$WATCH" 2>/dev/null || true
  if [ "${TWO_KEEP:-0}" = 1 ]; then echo "rxe-2hosts: run dir $RUN" >&2; else rm -rf "$RUN"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
awk -F: '/^cpu MHz/{gsub(/[ \t]/,"",$2); print $2; exit}' /proc/cpuinfo > "$RUN/cpumhz" || true

# The second stage of guest $1 (a or b): its address $2, its peer $3, its command $4.
stage() {
  local g=$1 self=$2 peer=$3 cmd=$4 d="$RUN/$1" v
  mkdir -p "$d"; : > "$d/shares"; cp "$RUN/cpumhz" "$d/cpumhz"
  [ "$PWD" != / ] && pwd -P >> "$d/shares"
  { echo '#!/bin/bash'
    echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
    echo "hostname host-$g; ip link set lo up"
    printf 'ip link set vec0 mtu %s up || exit 125\n' "$MTU"
    printf 'ip addr add %s/24 dev vec0 || exit 125\n' "$self"
    echo 'rdma link add rxe0 type rxe netdev vec0 || exit 125'
    echo 'for i in $(seq 200); do grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null && break; sleep 0.05; done'
    [ "${TWO_ICRC:-1}" = 0 ] && echo 'echo 0 > /sys/module/rdma_rxe/parameters/icrc || exit 125'
    echo 'ulimit -l unlimited'
    printf 'export SELF=%q PEER=%q\n' "$self" "$peer"
    printf 'export LD_PRELOAD=%q\n' "$LAB/uml/libtsctime.so"
    for v in HOME LANG LC_ALL TZ JAVA_HOME TERM; do
      [ -n "${!v+x}" ] && printf 'export %s=%q\n' "$v" "${!v}"
    done
    printf 'cd %q 2>/dev/null || cd /\n' "$PWD"
    printf 'exec bash -c %q\n' "$cmd"
  } > "$d/stage2"
}
stage a 10.77.0.1 10.77.0.2 "$1"
stage b 10.77.0.2 10.77.0.1 "$2"

# Boots guest $1 in the background; its UML process id goes to PID_$1.
boot() {
  local g=$1 d="$RUN/$1" mac
  case $g in a) mac=fe:fd:0a:4d:00:01;; b) mac=fe:fd:0a:4d:00:02;; esac
  # UML cannot poll a regular file: the serial lines are FIFOs, relayed into files.
  mkfifo "$RUN/$g.fo" "$RUN/$g.fe"
  cat "$RUN/$g.fo" > "$RUN/$g.out" & RELAYS="${RELAYS:-} $!"
  cat "$RUN/$g.fe" > "$RUN/$g.err" & RELAYS="$RELAYS $!"
  TMPDIR=/dev/shm "$UML" \
    mem="${TWO_MEM:-3G}" rootfstype=hostfs rootflags=/ ro init="$LAB/uml/init" \
    rxerun="$d" uml_dir="$d" umid="uml-$g" quiet \
    "vec0:transport=raw,ifname=two-$g,depth=128,gro=1,mtu=$MTU,mac=$mac" \
    con=null con0=null,fd:3 ssl=null ssl0=null,fd:4 ssl1=null,fd:5 \
    3>"$RUN/$g.console" 4>"$RUN/$g.fo" 5>"$RUN/$g.fe" </dev/null >"$RUN/$g.uml.log" 2>&1 &
  eval "PID_$g=$!"; PIDS="${PIDS:-} $!"
}
boot a; boot b
set +e
( for ((t = 0; t < ${TWO_TIMEOUT:-900} * 10; t++)); do sleep 0.1; done
  echo "rxe-2hosts: timeout after ${TWO_TIMEOUT:-900}s" >&2; kill -KILL -- "-$PID_a" "-$PID_b" ) 2>/dev/null &
WATCH=$!
wait "$PID_b"; urc_b=$?
for i in $(seq 100); do kill -0 "$PID_a" 2>/dev/null || break; sleep 0.1; done
kill -KILL -- "-$PID_a" 2>/dev/null; wait "$PID_a"
kill "$WATCH" 2>/dev/null; wait $RELAYS 2>/dev/null
set -e
for g in a b; do
  G=$(echo $g | tr ab AB)
  sed "s/^/$G| /" "$RUN/$g.out"; sed "s/^/$G| /" "$RUN/$g.err" >&2
  if [ ! -s "$RUN/$g/rc" ]; then
    echo "rxe-2hosts: guest $G ended without a result; console tail:" >&2
    tail -15 "$RUN/$g.console" | sed "s/^/$G console| /" >&2
  fi
done
[ -s "$RUN/a/rc" ] && echo "rxe-2hosts: A exited $(cat "$RUN/a/rc")" >&2
if [ -s "$RUN/b/rc" ]; then exit "$(cat "$RUN/b/rc")"; fi
[ "$urc_b" = 137 ] && exit 124
exit 125
