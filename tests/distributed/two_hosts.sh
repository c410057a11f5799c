#!/usr/bin/env bash
# Two hosts on one machine: two network namespaces joined by a veth pair, one rank in each, Open MPI
# over TCP between their addresses (mpirun starts the second rank's daemon through an "rsh agent"
# that enters the other namespace, with its own host name). Runs the equivalence scenario of
# test_distributed: 2 ranks over the wire train what 1 process trains at twice the batch.
#   two_hosts.sh <plugin folder> <test_distributed>
# Exit 77 (skipped) when namespaces are not permitted here or mpirun or the plugin is missing.
set -uo pipefail
plugin_dir=$1
program=$2
command -v mpirun >/dev/null || { echo "skipped: mpirun not found"; exit 77; }
command -v ip >/dev/null || { echo "skipped: ip (iproute2) not found"; exit 77; }
[ -e "$plugin_dir/libnnrt-comm-mpi.so" ] || { echo "skipped: libnnrt-comm-mpi.so not built"; exit 77; }
id=$$
ns_a=nnrt-a-$id ns_b=nnrt-b-$id
veth_a=nva$id veth_b=nvb$id
net=10.213.$((id % 250)).
work=$(mktemp -d)
cleanup() {
  ip netns del "$ns_a" 2>/dev/null
  ip netns del "$ns_b" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
if ! ip netns add "$ns_a" 2>"$work/err"; then
  echo "skipped: network namespaces are not permitted here: $(cat "$work/err")"
  exit 77
fi
ip netns add "$ns_b" || exit 1
ip link add "$veth_a" type veth peer name "$veth_b" || { echo "skipped: no veth pair allowed"; exit 77; }
ip link set "$veth_a" netns "$ns_a" && ip link set "$veth_b" netns "$ns_b" || exit 1
ip -n "$ns_a" addr add "${net}1/24" dev "$veth_a" && ip -n "$ns_a" link set "$veth_a" up && ip -n "$ns_a" link set lo up
ip -n "$ns_b" addr add "${net}2/24" dev "$veth_b" && ip -n "$ns_b" link set "$veth_b" up && ip -n "$ns_b" link set lo up
# mpirun calls the agent as: agent <host> <command line>; the second host's daemon runs in ns_b
# under its own host name, as on a second machine.
cat > "$work/agent" <<AGENT
#!/bin/sh
host=\$1
shift
exec ip netns exec $ns_b unshare --uts sh -c "hostname nnrt-host-b; \$*"
AGENT
chmod +x "$work/agent"
printf '%s slots=1\n%s slots=1\n' "${net}1" "${net}2" > "$work/hosts"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
start=$(date +%s)
timeout --kill-after=10 240 ip netns exec "$ns_a" unshare --uts sh -c "hostname nnrt-host-a; exec mpirun \
  --hostfile $work/hosts -np 2 --bind-to none --mca plm_rsh_agent $work/agent \
  --mca btl self,tcp --mca btl_tcp_if_include ${net}0/24 --mca oob_tcp_if_include ${net}0/24 \
  -x NNRT_BACKEND_PATH=$plugin_dir -x OMPI_MCA_mpi_yield_when_idle \
  $program equivalence" > "$work/log" 2>&1
rc=$?
cat "$work/log"
echo "mpirun over two namespaces exited with $rc after $(( $(date +%s) - start )) s"
[ "$rc" = 0 ] && grep -q "^rank 0 ok" "$work/log" && grep -q "^rank 1 ok" "$work/log" && exit 0
echo "FAILED"
exit 1
