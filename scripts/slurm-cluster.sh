#!/usr/bin/env bash
# A real Slurm cluster on this one machine, for the tests and for trying the job files in
# slurm/: one controller and N compute nodes (default 4), each in its own network, UTS and
# mount namespace, joined by a bridge that lives in a namespace of its own.
#
#   scripts/slurm-cluster.sh up          start munged, slurmctld and one slurmd per node
#   scripts/slurm-cluster.sh down        stop everything and remove what `up` made
#   scripts/slurm-cluster.sh status      say whether it is up; sinfo when it is
#   scripts/slurm-cluster.sh run CMD...  run CMD on the controller host (as the caller,
#                                        in the current directory), e.g.
#                                        run sbatch --wait slurm/validate.sbatch
#   scripts/slurm-cluster.sh exec NODE CMD...
#                                        run CMD on compute node NODE, outside any job
#                                        (as slurmd's own scripts run: health checks)
#   scripts/slurm-cluster.sh degrade NODE RATE [DELAY]
#                                        shape NODE's link: tc tbf at RATE (e.g. 100mbit),
#                                        netem DELAY (e.g. 5ms) when given; `degrade NODE off`
#   scripts/slurm-cluster.sh degrade-link NODE_A NODE_B RATE
#                                        shape only the traffic between two nodes (both
#                                        ways; each end's other traffic runs free): one
#                                        slow link, not a slow node; `degrade-link A B off`
#   scripts/slurm-cluster.sh nodes       the compute nodes' names, one per line
#
# Exit codes: 0 done; 1 something failed (what, on stderr; `up` then cleans up); 2 usage;
# 3 this machine cannot host the cluster (not root, no namespaces, missing programs): the
# message says what is missing, and tests skip on it.
#
# Settings (environment): COMMBENCH_SLURM_NODES (4), COMMBENCH_SLURM_DIR
# (/var/lib/commbench-slurm: config, logs, spool; not under /tmp, which every node gets
# privately), COMMBENCH_SLURM_CPUS (CPUs each node declares, 4), COMMBENCH_SLURM_SHARE
# (colon-separated folders under /tmp the nodes must see besides the repository and the
# directory `up` runs in, which they see wherever they are).
#
# Why it is built this way (tried on Debian 12's slurm-wlm 22.05 and Open MPI 4.1):
# - Each host's namespaces are held by a `sleep` that the daemons and job steps join with
#   nsenter, so a daemon that dies does not take its host's hostname or /tmp with it.
# - nsenter --net, not `ip netns exec`, which remounts /sys and breaks slurmd's set-up.
# - Every host gets a private /tmp (PMIx's directories would collide) and its own
#   /etc/hosts naming all hosts (bind-mounted inside its mount namespace only).
# - munged listens on a socket in the state directory, named in slurm.conf's AuthInfo:
#   unix sockets with a path cross network namespaces; the host's own munge is not touched.
# - Addresses live only inside the namespaces made here (10.213.0.0/24 on a bridge in the
#   fabric namespace): nothing is added to the host's own network.
# - proctrack/linuxproc and task/none: no cgroups, which a container may not delegate.
set -euo pipefail

readonly NODES="${COMMBENCH_SLURM_NODES:-4}"
readonly STATE="${COMMBENCH_SLURM_DIR:-/var/lib/commbench-slurm}"
readonly CPUS="${COMMBENCH_SLURM_CPUS:-4}"
readonly PREFIX=cbs                 # namespace names: cbs-fabric, cbs-ctl, cbs-node1...
readonly SUBNET=10.213.0
readonly CONTROLLER=cb-ctl
readonly WAIT_SECONDS=60            # every wait is bounded by this
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly ROOT

log() { printf '[slurm-cluster] %s\n' "$*" >&2; }
fail() { log "$*"; exit 1; }
cannot() { log "cannot run here: $*"; exit 3; }

node_name() { printf 'cb-node%d' "$1"; }
node_address() { printf '%s.%d' "$SUBNET" $((10 + $1)); }
netns_of() { printf '%s-%s' "$PREFIX" "${1#cb-}"; }
holder_pid_file() { printf '%s/hosts/%s.holder' "$STATE" "$1"; }

check_machine() {
  [ "$(id -u)" -eq 0 ] || cannot "needs root (it makes namespaces and starts daemons); run it with sudo"
  local program
  for program in slurmctld slurmd munged srun sbatch sinfo scontrol ip nsenter unshare tc; do
    command -v "$program" >/dev/null 2>&1 ||
      cannot "'$program' is not installed (Debian: apt-get install slurm-wlm munge iproute2 util-linux)"
  done
  case "$NODES" in ''|*[!0-9]*|0) log "COMMBENCH_SLURM_NODES='$NODES' is not a positive whole number"; exit 2 ;; esac
  [ "$NODES" -le 200 ] || { log "COMMBENCH_SLURM_NODES=$NODES: at most 200 nodes fit the address plan"; exit 2; }
  unshare --net --uts --mount true 2>/dev/null ||
    cannot "this machine cannot make network, UTS and mount namespaces (unshare failed: a container without CAP_SYS_ADMIN?)"
  local probe="${PREFIX}-probe$$"
  ip netns add "$probe" 2>/dev/null || cannot "'ip netns add' failed: named network namespaces are not available"
  local veth_ok=1
  ip -n "$probe" link add cbs-probe0 type veth peer name cbs-probe1 2>/dev/null || veth_ok=0
  ip netns del "$probe"
  [ "$veth_ok" -eq 1 ] || cannot "veth pairs cannot be made (no veth support in this kernel?)"
}

# Runs a command in HOST's namespaces (network, UTS, mount), in the caller's directory.
in_host() {
  local host="$1"; shift
  local holder
  holder="$(cat "$(holder_pid_file "$host")" 2>/dev/null)" || fail "$host is not up (no holder process)"
  kill -0 "$holder" 2>/dev/null || fail "$host is not up (holder $holder is gone): run '$0 down; $0 up'"
  nsenter --target "$holder" --net --uts --mount --wd="$PWD" -- "$@"
}

# Waits until CONDITION (a command) succeeds, at most WAIT_SECONDS; says WHAT otherwise.
wait_for() {
  local what="$1"; shift
  local deadline=$((SECONDS + WAIT_SECONDS))
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.5
  done
  log "$what: ok"
}

write_config() {
  mkdir -p "$STATE/etc" "$STATE/ctl/state" "$STATE/munge" "$STATE/hosts"
  {
    echo "127.0.0.1 localhost"
    echo "$SUBNET.1 $CONTROLLER"
    for ((i = 1; i <= NODES; i++)); do echo "$(node_address "$i") $(node_name "$i")"; done
  } > "$STATE/etc/hosts"
  local node_lines=""
  for ((i = 1; i <= NODES; i++)); do
    mkdir -p "$STATE/nodes/$(node_name "$i")/spool"
    node_lines+="NodeName=$(node_name "$i") NodeAddr=$(node_address "$i") CPUs=$CPUS State=UNKNOWN"$'\n'
  done
  cat > "$STATE/etc/slurm.conf" <<EOF
# Written by scripts/slurm-cluster.sh: a test cluster on one machine.
ClusterName=commbench
SlurmctldHost=$CONTROLLER($SUBNET.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$STATE/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$STATE/ctl/state
SlurmdSpoolDir=$STATE/nodes/%n/spool
SlurmctldPidFile=$STATE/ctl/slurmctld.pid
SlurmdPidFile=$STATE/nodes/%n/slurmd.pid
SlurmctldLogFile=$STATE/ctl/slurmctld.log
SlurmdLogFile=$STATE/nodes/%n/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=pmix
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
MessageTimeout=20
KillWait=5
InactiveLimit=0
$node_lines
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munge() {
  # munged wants its key readable by its user only and refuses group-writable parents.
  chmod 0755 "$STATE" "$STATE/munge"
  [ -f "$STATE/munge/munge.key" ] || dd if=/dev/urandom of="$STATE/munge/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$STATE/munge/munge.key"
  munged --force --socket="$STATE/munge/munge.socket" --key-file="$STATE/munge/munge.key" \
         --pid-file="$STATE/munge/munged.pid" --log-file="$STATE/munge/munged.log" \
         --seed-file="$STATE/munge/munged.seed" ||
    fail "munged did not start (see $STATE/munge/munged.log)"
  wait_for "munge" test -S "$STATE/munge/munge.socket" || fail "munged's socket did not appear"
}

# Makes HOST's network namespace on the bridge and a holder process for its UTS and mount
# namespaces (hostname, private /tmp, /etc/hosts).
make_host() {
  local host="$1" address="$2" index="$3"
  local netns
  netns="$(netns_of "$host")"
  ip netns add "$netns"
  ip -n "$PREFIX-fabric" link add "veth$index" type veth peer name eth0 netns "$netns"
  ip -n "$PREFIX-fabric" link set "veth$index" master br0 up
  ip -n "$netns" link set lo up
  ip -n "$netns" addr add "$address/24" dev eth0
  ip -n "$netns" link set eth0 up
  local real_tmp="$STATE/hosts/$host.tmp"
  mkdir -p "$real_tmp"
  # setsid: the holder outlives this script and the terminal; its own stdio goes nowhere.
  # Inside: the host's /tmp stays reachable at $real_tmp, a private tmpfs covers /tmp, and
  # the shared folders under /tmp ($5...) are bound back into it from the real one.
  # shellcheck disable=SC2016  # $1.. are the inner shell's arguments
  setsid nsenter --net="/run/netns/$netns" -- \
    unshare --uts --mount --propagation private -- \
    sh -c 'hostname "$1" && mount --bind /tmp "$4" && mount -t tmpfs -o mode=1777 tmpfs /tmp &&
           mount --bind "$2" /etc/hosts && pid_file="$3" && real_tmp="$4" && shift 4 &&
           for shared in "$@"; do mkdir -p "/tmp/$shared" && mount --bind "$real_tmp/$shared" "/tmp/$shared" || exit 1; done &&
           echo $$ > "$pid_file" && exec sleep infinity' \
      holder "$host" "$STATE/etc/hosts" "$(holder_pid_file "$host")" "$real_tmp" "${SHARED_UNDER_TMP[@]}" \
    </dev/null >/dev/null 2>&1 &
  wait_for "$host namespaces" test -s "$(holder_pid_file "$host")" || fail "$host's namespaces were not made"
}

# The nodes' shared file system is the host's, except /tmp, which each node has to itself.
# Folders under /tmp that the jobs need (the repository and the caller's directory, when
# they are there, and COMMBENCH_SLURM_SHARE) are bound into every node's /tmp: their first
# component below /tmp, relative to it.
shared_under_tmp() {
  local path
  local -A seen=()
  local IFS=:
  # shellcheck disable=SC2086  # COMMBENCH_SLURM_SHARE is a colon-separated list
  for path in "$ROOT" "$PWD" ${COMMBENCH_SLURM_SHARE:-}; do
    path="$(realpath -m "$path")"
    case "$path" in /tmp/?*) ;; *) continue ;; esac
    path="${path#/tmp/}"
    path="${path%%/*}"
    [ -n "${seen[$path]:-}" ] && continue
    seen[$path]=1
    printf '%s\n' "$path"
  done
}

make_network() {
  mapfile -t SHARED_UNDER_TMP < <(shared_under_tmp)
  ip netns add "$PREFIX-fabric"
  ip -n "$PREFIX-fabric" link set lo up
  ip -n "$PREFIX-fabric" link add br0 type bridge
  ip -n "$PREFIX-fabric" link set br0 up
  make_host "$CONTROLLER" "$SUBNET.1" 0
  for ((i = 1; i <= NODES; i++)); do make_host "$(node_name "$i")" "$(node_address "$i")" "$i"; done
}

all_nodes_idle() {
  local states
  states="$(in_host "$CONTROLLER" env SLURM_CONF="$STATE/etc/slurm.conf" sinfo -h -N -o '%T' 2>/dev/null)" || return 1
  [ "$(grep -c '^idle' <<<"$states")" -eq "$NODES" ]
}

cmd_up() {
  check_machine
  if [ -e "$STATE" ] || ls /run/netns/"$PREFIX"-* >/dev/null 2>&1; then
    log "a cluster (or what a killed 'up' left) is there: taking it down first"
    cmd_down
  fi
  trap 'log "up failed: cleaning up"; cmd_down; exit 1' ERR
  write_config
  start_munge
  make_network
  export SLURM_CONF="$STATE/etc/slurm.conf"
  in_host "$CONTROLLER" slurmctld -f "$SLURM_CONF" ||
    { log "slurmctld did not start; its log:"; tail -5 "$STATE/ctl/slurmctld.log" >&2; false; }
  wait_for "slurmctld" in_host "$CONTROLLER" scontrol ping ||
    { log "slurmctld does not answer; its log:"; tail -5 "$STATE/ctl/slurmctld.log" >&2; false; }
  for ((i = 1; i <= NODES; i++)); do
    local node
    node="$(node_name "$i")"
    in_host "$node" slurmd -f "$SLURM_CONF" -N "$node" ||
      { log "slurmd on $node did not start; its log:"; tail -5 "$STATE/nodes/$node/slurmd.log" >&2; false; }
  done
  wait_for "$NODES nodes idle" all_nodes_idle ||
    { log "not every node came up idle:"; in_host "$CONTROLLER" sinfo -N >&2 || true; false; }
  trap - ERR
  log "up: $NODES nodes ($(node_name 1)..$(node_name "$NODES")), controller $CONTROLLER; state in $STATE"
}

# Ends every process in NETNS (daemons, job steps, the holder), politely, then for sure.
stop_processes_in() {
  local netns="$1" pids
  pids="$(ip netns pids "$netns" 2>/dev/null | tr '\n' ' ')"
  [ -n "${pids// }" ] || return 0
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  local deadline=$((SECONDS + 10))
  while [ -n "$(ip netns pids "$netns" 2>/dev/null)" ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
  pids="$(ip netns pids "$netns" 2>/dev/null | tr '\n' ' ')"
  # shellcheck disable=SC2086
  [ -z "${pids// }" ] || kill -KILL $pids 2>/dev/null || true
}

cmd_down() {
  [ "$(id -u)" -eq 0 ] || cannot "needs root"
  local netns
  for netns in /run/netns/"$PREFIX"-*; do
    [ -e "$netns" ] || continue
    netns="$(basename "$netns")"
    stop_processes_in "$netns"
    ip netns del "$netns" 2>/dev/null || true
  done
  if [ -f "$STATE/munge/munged.pid" ]; then
    local munged_pid
    munged_pid="$(cat "$STATE/munge/munged.pid")"
    if [ "$(cat "/proc/$munged_pid/comm" 2>/dev/null)" = munged ]; then
      kill -TERM "$munged_pid" 2>/dev/null || true
      local deadline=$((SECONDS + 10))
      while kill -0 "$munged_pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
      kill -KILL "$munged_pid" 2>/dev/null || true
    fi
  fi
  # A holder whose namespace was already deleted still sleeps: end it by its pid file.
  local holder_file holder
  for holder_file in "$STATE"/hosts/*.holder; do
    [ -f "$holder_file" ] || continue
    holder="$(cat "$holder_file")"
    if [ "$(cat "/proc/$holder/comm" 2>/dev/null)" = sleep ]; then kill -KILL "$holder" 2>/dev/null || true; fi
  done
  rm -rf "$STATE"
  log "down: nothing of the cluster is left"
}

cmd_status() {
  if [ ! -f "$STATE/etc/slurm.conf" ]; then echo "down"; return 1; fi
  if ! in_host "$CONTROLLER" env SLURM_CONF="$STATE/etc/slurm.conf" scontrol ping >/dev/null 2>&1; then
    echo "broken: state in $STATE but the controller does not answer"
    return 1
  fi
  echo "up: state in $STATE"
  in_host "$CONTROLLER" env SLURM_CONF="$STATE/etc/slurm.conf" sinfo -N
}

cmd_run() {
  [ $# -gt 0 ] || { log "run: which command?"; exit 2; }
  [ -f "$STATE/etc/slurm.conf" ] || fail "the cluster is not up: run '$0 up' first"
  # Jobs inherit these from sbatch and srun; a caller's own settings win.
  # - Every node shares this machine's cores, and Open MPI's ranks spin while they wait: a
  #   rank spinning on the core its peer needs made healthy pairs read a hundredth of their
  #   speed at random. Open MPI's answer to oversubscription is to yield when idle (mpirun
  #   sets it when it sees more ranks than cores; srun's ranks cannot see it).
  # - Ranks talk through UCX's TCP transport, not Open MPI's TCP BTL: under load, two ranks
  #   connecting to each other at once in MPI_Init made the BTL (Open MPI 4.1.4) read a
  #   garbled header and call a null handler, one crash in about 40 jobs (a core showed
  #   mca_btl_tcp -> libevent -> opal_progress -> ompi_mpi_init); the other ranks then
  #   waited out their timeout.
  in_host "$CONTROLLER" env SLURM_CONF="$STATE/etc/slurm.conf" \
    OMPI_MCA_mpi_yield_when_idle="${OMPI_MCA_mpi_yield_when_idle:-1}" \
    OMPI_MCA_pml="${OMPI_MCA_pml:-ucx}" OMPI_MCA_pml_ucx_tls="${OMPI_MCA_pml_ucx_tls:-any}" \
    OMPI_MCA_pml_ucx_devices="${OMPI_MCA_pml_ucx_devices:-any}" OMPI_MCA_btl="${OMPI_MCA_btl:-self}" "$@"
}

# A token bucket at RATE on DEVICE's egress, and netem's DELAY under it when given.
shape_link() {
  local netns="$1" device="$2" rate="$3" delay="$4"
  tc -n "$netns" qdisc del dev "$device" root 2>/dev/null || true
  tc -n "$netns" qdisc add dev "$device" root handle 1: tbf rate "$rate" burst 64kb latency 400ms
  [ -z "$delay" ] || tc -n "$netns" qdisc add dev "$device" parent 1:1 handle 10: netem delay "$delay" ||
    fail "netem (for DELAY) is not available in this kernel (CONFIG_NET_SCH_NETEM); a RATE alone works"
}

cmd_exec() {
  [ $# -ge 2 ] || { log "exec NODE CMD...: which node and command?"; exit 2; }
  local node="$1"; shift
  [ -f "$(holder_pid_file "$node")" ] || { log "exec: '$node' is not a node of this cluster"; exit 2; }
  in_host "$node" env SLURM_CONF="$STATE/etc/slurm.conf" "$@"
}

cmd_degrade() {
  [ $# -ge 2 ] || { log "degrade NODE RATE [DELAY] | degrade NODE off"; exit 2; }
  local node="$1" rate="$2" delay="${3:-}"
  [ -f "$(holder_pid_file "$node")" ] || { log "degrade: '$node' is not a node of this cluster"; exit 2; }
  local netns
  netns="$(netns_of "$node")"
  ip -n "$netns" link show eth0 >/dev/null 2>&1 || fail "$node has no link to shape"
  local index="${node#cb-node}"
  if [ "$rate" = off ]; then
    tc -n "$netns" qdisc del dev eth0 root 2>/dev/null || true
    tc -n "$PREFIX-fabric" qdisc del dev "veth$index" root 2>/dev/null || true
    log "$node: link restored"
    return 0
  fi
  # Both directions of a node's traffic cross its veth: shape its egress here and its
  # ingress on the bridge side (the fabric end of the same pair).
  shape_link "$netns" eth0 "$rate" "$delay"
  shape_link "$PREFIX-fabric" "veth$index" "$rate" "$delay"
  log "$node: link shaped to $rate${delay:+, delay $delay}"
}

# One pair slow, its ends fast with everyone else: on each end, an htb root whose default
# class runs free and whose second class, at RATE, takes only packets to the other end.
cmd_degrade_link() {
  [ $# -eq 3 ] || { log "degrade-link NODE_A NODE_B RATE | degrade-link NODE_A NODE_B off"; exit 2; }
  local a="$1" b="$2" rate="$3" node other
  for node in "$a" "$b"; do
    [ -f "$(holder_pid_file "$node")" ] || { log "degrade-link: '$node' is not a node of this cluster"; exit 2; }
  done
  [ "$a" != "$b" ] || { log "degrade-link: a link joins two different nodes"; exit 2; }
  for node in "$a" "$b"; do
    other="$b"
    [ "$node" = "$a" ] || other="$a"
    local netns
    netns="$(netns_of "$node")"
    tc -n "$netns" qdisc del dev eth0 root 2>/dev/null || true
    [ "$rate" = off ] && continue
    # A kernel without htb or u32 cannot shape one pair: exit 3, as for a machine that
    # cannot host the cluster, so the tests skip, saying why.
    tc -n "$netns" qdisc add dev eth0 root handle 1: htb default 10 r2q 100000 ||
      cannot "degrade-link needs the htb qdisc (CONFIG_NET_SCH_HTB)"
    tc -n "$netns" class add dev eth0 parent 1: classid 1:10 htb rate 100gbit
    tc -n "$netns" class add dev eth0 parent 1: classid 1:20 htb rate "$rate" ceil "$rate" ||
      fail "degrade-link: tc refused the rate '$rate'"
    if ! tc -n "$netns" filter add dev eth0 parent 1: protocol ip prio 1 u32 \
      match ip dst "$(node_address "${other#cb-node}")/32" flowid 1:20; then
      tc -n "$netns" qdisc del dev eth0 root 2>/dev/null || true
      cannot "degrade-link needs the u32 classifier (CONFIG_NET_CLS_U32)"
    fi
  done
  if [ "$rate" = off ]; then log "link $a - $b: restored"; else log "link $a - $b: shaped to $rate"; fi
}

main() {
  local command="${1:-}"
  [ $# -gt 0 ] && shift
  case "$command" in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    run) cmd_run "$@" ;;
    exec) cmd_exec "$@" ;;
    degrade) cmd_degrade "$@" ;;
    degrade-link) cmd_degrade_link "$@" ;;
    nodes) for ((i = 1; i <= NODES; i++)); do node_name "$i"; echo; done ;;
    -h|--help|help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
    *) log "usage: $0 up|down|status|run CMD...|exec NODE CMD...|degrade NODE RATE [DELAY]|degrade-link A B RATE|nodes (got '${command}')"; exit 2 ;;
  esac
}

main "$@"
