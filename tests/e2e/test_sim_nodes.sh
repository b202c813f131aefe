#!/bin/bash
# koord sim registers its fleet's Nodes from several threads at once (src/sim/fleet_nodes.c).
# Every node must still come out whole and as itself: kubectl lists exactly the fleet's names,
# each Ready with the InternalIP of its own index. And a node the API server refuses stops the
# run with an error that names that node and says how many were registered, not a silent gap:
# here a 64-character name, which the trace reader accepts (an object name may have 253) but
# the API server refuses as the value of the kubernetes.io/hostname label (63 at most).
. "$(dirname "$0")/lib.sh"

command -v kubectl >/dev/null || skip "kubectl is not installed"
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\nls-000,1000,1024,0,0,,LS,Running,0,40,0\n' \
    >"$TMP/pods.csv"

# A refused node, last in the file: the 24 before it were all taken before it, so all 24 are
# registered when the run stops.
bad=z$(printf 'x%.0s' $(seq 1 63))
{
    echo "sn,cpu_milli,memory_mib,gpu,model"
    for i in $(seq -w 0 23); do echo "node-$i,8000,16384,0,"; done
    echo "$bad,8000,16384,0,"
} >"$TMP/nodes.csv"
run "$KOORD" sim --nodes "$TMP/nodes.csv" --pods "$TMP/pods.csv" --colocation on \
    --no-node-certs --state-dir "$TMP/bad-state" --out "$TMP/bad-report"
expect_rc 1 "a node the API server refuses"
expect_out "koord sim: colocation on: registering node \"$bad\" failed: " "the refused node named"
expect_out "(24 of 25 nodes registered)" "how far registration got"
[ ! -e "$TMP/bad-report/summary.csv" ] || fail "a report was written for a run that did not start"

# 40 synthetic nodes, registered in parallel: while the replay runs, the API server holds
# exactly sim-node-00000 .. sim-node-00039, each Ready, node n at 10.0.0.n.
state=$TMP/state
"$KOORD" sim --nodes 40 --pods "$TMP/pods.csv" --colocation on --speed 1 --no-node-certs \
    --state-dir "$state" --out "$TMP/report" >"$TMP/sim.log" 2>&1 &
simpid=$!
trap 'kill $simpid 2>/dev/null || true; wait $simpid 2>/dev/null || true; rm -rf "$TMP"' EXIT
for _ in $(seq 1 1200); do
    grep -q "replaying 1 pods" "$TMP/sim.log" && break
    kill -0 $simpid 2>/dev/null || break
    sleep 0.1
done
grep -q "replaying 1 pods" "$TMP/sim.log" || { cat "$TMP/sim.log"; fail "the replay did not start"; finish; }
export KUBECONFIG=$state/on/kubeconfig
for i in $(seq 0 39); do printf 'sim-node-%05d True 10.0.0.%d\n' "$i" "$i"; done >"$TMP/want"
kubectl get nodes -l sim.koordinator.sh/fleet=true \
    -o jsonpath='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status} {.status.addresses[?(@.type=="InternalIP")].address}{"\n"}{end}' |
    sort >"$TMP/got" || fail "listing the nodes"
diff "$TMP/want" "$TMP/got" >"$TMP/diff" || fail "the registered nodes differ (want, got): $(cat "$TMP/diff")"

rc=0
wait $simpid || rc=$?
[ "$rc" -eq 0 ] || { tail -n 40 "$TMP/sim.log"; fail "koord sim exited $rc"; }
finish
