#!/bin/bash
# koord manager with agents that report into the slo.koordinator.sh NodeMetric objects, as
# upstream's koordlet does (issue 18: a user swaps upstream's manager for ours and keeps their
# koordlets), against a real koord apiserver, driven by kubectl:
#
#  - the NodeMetric CRD installed after the manager started leading (--nodemetric-crd auto):
#    picked up, one object per Node created; one deleted by hand comes back at once;
#  - a `koord agent --report-mode crd` for a node with no in-memory report: the Node's
#    kubernetes.io/batch-cpu is computed from the report it wrote into the object;
#  - both kinds of report: the fresher one counts (an in-memory report after the CRD one, then
#    a CRD report after that);
#
# Waits poll with deadlines.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || skip "kubectl not installed"
command -v curl >/dev/null || skip "curl not installed"

start_apiserver "$TMP/data"
mpid="" apid=""
cleanup() {
    kill -9 $pid $mpid $apid 2>/dev/null || true
    wait $pid $mpid $apid 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT
# Every CRD but slo.koordinator.sh NodeMetric, which comes later.
for f in "$KOORD_SOURCE_DIR"/deploy/crds/*.yaml; do
    case $f in */slo.koordinator.sh_nodemetrics.yaml) continue ;; esac
    k apply -f "$f"
    expect_rc 0 "apply $f"
done
# Colocation on (defaults: cpu reclaim 60 %), and crd-node: 8 cores, 16Gi, no pods.
k create -f - <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: slo-controller-config, namespace: koordinator-system}
data:
  colocation-config: '{"enable": true}'
---
apiVersion: v1
kind: Node
metadata: {name: crd-node, labels: {kubernetes.io/hostname: crd-node}}
status:
  capacity: {cpu: "8", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 16Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
EOF
expect_rc 0 "create slo-controller-config and crd-node"

"$KOORD" manager --listen 127.0.0.1:0 --webhook-listen 127.0.0.1:0 --ready-file "$TMP/mready" \
    --cert-dir "$TMP/m" --client-ca-file "$TMP/data/pki/ca.crt" \
    --leader-election-lease-duration 3 --leader-election-renew-deadline 2 \
    --leader-election-retry-period 1 >>"$TMP/manager.log" 2>&1 &
mpid=$!
wait_for "manager listening" test -s "$TMP/mready"
maddr=$(cat "$TMP/mready")
mca="$TMP/m/koord-manager-ca.crt"
wait_for "manager ready" curl -sfk "https://$maddr/readyz"
wait_for "NodeSLO of crd-node" kubectl get nodeslo crd-node
# No report anywhere: no batch resources (a missing report degrades).
k get node crd-node -o jsonpath='{.status.allocatable.kubernetes\.io/batch-cpu}'
expect_rc 0 "get crd-node"
[ ! -s "$TMP/out" ] || fail "batch-cpu without any report: $(cat "$TMP/out")"

# The CRD, installed now: the manager's watch finds it (its list retries at most 10 s apart)
# and creates crd-node's object with the collect policy it serves.
k apply -f "$KOORD_SOURCE_DIR/deploy/crds/slo.koordinator.sh_nodemetrics.yaml"
expect_rc 0 "apply the NodeMetric CRD"
crd_spec() {
    [ "$(kubectl get nodemetrics.slo.koordinator.sh crd-node \
        -o jsonpath='{.spec.metricCollectPolicy.reportIntervalSeconds}')" = 60 ]
}
wait_for "slo.koordinator.sh NodeMetric of crd-node, after the CRD was installed" crd_spec
grep -q 'NodeMetric CRD is not installed' "$TMP/manager.log" ||
    fail "the manager did not say the CRD was missing at start"

# Deleted by hand: re-created at once (a new uid). Its Node does not change meanwhile (no
# report, so no batch resources to write), so no Node event brings it back: the watch does.
k get nodemetrics.slo.koordinator.sh crd-node -o jsonpath='{.metadata.uid}'
uid=$(cat "$TMP/out")
[ -n "$uid" ] || fail "no uid for crd-node's NodeMetric"
k get node crd-node -o jsonpath='{.metadata.resourceVersion}'
node_rv=$(cat "$TMP/out")
k delete nodemetrics.slo.koordinator.sh crd-node
expect_rc 0 "delete crd-node's NodeMetric"
recreated() {
    local u
    u=$(kubectl get nodemetrics.slo.koordinator.sh crd-node -o jsonpath='{.metadata.uid}') &&
        [ -n "$u" ] && [ "$u" != "$uid" ]
}
wait_for "crd-node's NodeMetric re-created" recreated
wait_for "re-created with its spec" crd_spec
k get node crd-node -o jsonpath='{.metadata.resourceVersion}'
[ "$(cat "$TMP/out")" = "$node_rv" ] || fail "crd-node changed meanwhile: re-created through a Node event?"

# An agent in crd mode on a host tree with no pods: idle CPU (the counters stand still), so
# its report's systemUsage cpu is 0 and batch-cpu is 8000 x 60 % = 4800.
host="$TMP/host"
cg="$host/cgroup"
mkdir -p "$host/proc" "$host/sys"
for sub in cpuacct memory cpu cpuset; do mkdir -p "$cg/$sub/kubepods/besteffort" "$cg/$sub/kubepods/burstable"; done
echo 0 >"$cg/cpuacct/kubepods/besteffort/cpuacct.usage"
printf 'cpu  1000 0 1000 100000 0 0 0 0 0 0\ncpu0 1000 0 1000 100000 0 0 0 0 0 0\n' >"$host/proc/stat"
printf 'MemTotal:       16777216 kB\nMemFree:        12582912 kB\nMemAvailable:   12582912 kB\n' \
    >"$host/proc/meminfo"
"$KOORD" agent --node-name crd-node --kubeconfig "$KUBECONFIG" --report-mode crd \
    --enable-qos=false --cgroup-root "$cg" --proc-root "$host/proc" --sys-root "$host/sys" \
    --cgroup-version v1 --cgroup-driver cgroupfs --resctrl-root "$host/sys/fs/resctrl" \
    --listen 127.0.0.1:0 --ready-file "$TMP/a.ready" >>"$TMP/agent.log" 2>&1 &
apid=$!
wait_for "crd-mode agent running" test -s "$TMP/a.ready"
reported_crd() {
    [ -n "$(kubectl get nodemetrics.slo.koordinator.sh crd-node \
        -o jsonpath='{.status.updateTime}')" ]
}
wait_for "the agent's report in crd-node's slo.koordinator.sh NodeMetric" reported_crd
batch_cpu() {
    [ "$(kubectl get node crd-node -o jsonpath='{.status.allocatable.kubernetes\.io/batch-cpu}')" = "$1" ]
}
wait_for "batch-cpu 4800 on crd-node from the crd-mode agent's report" batch_cpu 4800
# ... and not from the manager's in-memory NodeMetric, which has no report.
k --server "https://$maddr" --certificate-authority "$mca" \
    get nodemetrics.metrics.koordinator.sh crd-node -o jsonpath='{.status.updateTime}'
expect_rc 0 "in-memory NodeMetric of crd-node"
[ ! -s "$TMP/out" ] || fail "the in-memory NodeMetric of crd-node has a report: $(cat "$TMP/out")"
kill -TERM "$apid"
wait "$apid" || fail "crd-mode agent exit status $?"
apid=""

# An in-memory report after it (system usage 500m) is the fresher one: 4800 - 500.
cat >"$TMP/status.json" <<'EOF'
{"nodeMetric":{"nodeUsage":{"resources":{"cpu":"500m","memory":"4Gi"}},
 "systemUsage":{"resources":{"cpu":"500m","memory":"4Gi"}}},"podsMetric":[]}
EOF
run "$KOORD" report --node crd-node -f "$TMP/status.json" --server "https://$maddr" \
    --certificate-authority "$mca"
expect_rc 0 "in-memory report for crd-node"
wait_for "batch-cpu 4300 from the in-memory report" batch_cpu 4300
# Then a CRD report stamped later still (system usage 1): 4800 - 1000.
later=$(date -u -d '+5 seconds' +%Y-%m-%dT%H:%M:%SZ)
k patch nodemetrics.slo.koordinator.sh crd-node --subresource status --type merge -p \
    "{\"status\":{\"updateTime\":\"$later\",\"nodeMetric\":{\"nodeUsage\":{\"resources\":{\"cpu\":\"1\",\"memory\":\"4Gi\"}},\"systemUsage\":{\"resources\":{\"cpu\":\"1\",\"memory\":\"4Gi\"}}},\"podsMetric\":[]}}"
expect_rc 0 "CRD report for crd-node"
wait_for "batch-cpu 3800 from the fresher CRD report" batch_cpu 3800

grep -qi 'forbidden' "$TMP/manager.log" && fail "manager refused something: $(grep -i forbidden "$TMP/manager.log")"
kill -TERM "$mpid"
wait "$mpid" || fail "manager exit status $?"
mpid=""
finish
