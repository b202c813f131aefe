#!/bin/bash
# Two koord managers behind koord apiserver's aggregation layer, driven as a cluster would drive
# them: kubectl through the API server, nodes reporting with their own bearer tokens.
#  - slo-controller-config: a NodeSLO per node with the rendered spec; a key broken -> Warning
#    Event, NodeSLOs unchanged; fixed -> NodeSLOs updated.
#  - NodeMetrics for two nodes through aggregation (get, watch), node A writing B -> 403.
#  - batch resources on a reporting node, removed when its reports stop past the degrade window.
#  - exactly one manager ready; kill -9 of the leader -> the other takes over within the lease,
#    a watch from the old term gets 410, a relist sees the new term and no old status, reports
#    resume.
# Every wait polls with a deadline.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 0; }
command -v curl >/dev/null || { echo "SKIP: curl not installed"; exit 0; }

LEASE=3 # seconds; renew deadline 2, retry period 1
GV=apis/metrics.koordinator.sh/v1alpha1
NM=nodemetrics.metrics.koordinator.sh

cat >"$TMP/tokens.csv" <<'EOF'
tok-a,system:node:node-a,uid-a,"system:nodes"
tok-b,system:node:node-b,uid-b,"system:nodes"
EOF
start_apiserver "$TMP/data" --token-auth-file "$TMP/tokens.csv"
m1="" m2="" watcher="" reporter=""
cleanup() {
    kill -9 $pid $m1 $m2 $watcher $reporter 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT


k apply -f "$KOORD_SOURCE_DIR/deploy/crds/"
expect_rc 0 "apply CRDs"
for n in a b; do
    cat >"$TMP/node-$n.yaml" <<EOF
apiVersion: v1
kind: Node
metadata: {name: node-$n, labels: {kubernetes.io/hostname: node-$n}}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
EOF
    k create -f "$TMP/node-$n.yaml"
    expect_rc 0 "create node-$n"
    # The node's own credentials: its bearer token, the cluster CA.
    token_kubeconfig "$TMP/kubeconfig-$n" tok-$n
done
cat >"$TMP/cm.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: slo-controller-config, namespace: koordinator-system}
data:
  colocation-config: '{"enable": true}'
  resource-threshold-config: '{"clusterStrategy": {"enable": true, "cpuSuppressThresholdPercent": 55}}'
EOF
k create -f "$TMP/cm.yaml"
expect_rc 0 "create slo-controller-config"

# Both managers trust what the API server publishes (extension-apiserver-authentication) and
# register the APIService at their own port while leading. One "minute" of degradeTimeMinutes
# is 400 ms: a 6 s window.
start_manager() {
    "$KOORD" manager --kubeconfig "$KUBECONFIG" --listen 127.0.0.1:0 --webhook-listen 127.0.0.1:0 --ready-file "$TMP/m$1.ready" \
        --cert-dir "$TMP/certs" --register-apiservice 127.0.0.1:0 --degrade-minute-ms 400 \
        --leader-election-lease-duration $LEASE --leader-election-renew-deadline 2 \
        --leader-election-retry-period 1 >>"$TMP/m$1.log" 2>&1 &
}
start_manager 1
m1=$!
wait_for "manager 1 listening" test -s "$TMP/m1.ready"
start_manager 2 # after the first: they share the generated certificates
m2=$!
wait_for "manager 2 listening" test -s "$TMP/m2.ready"
addr1=$(cat "$TMP/m1.ready")
addr2=$(cat "$TMP/m2.ready")
readyz() { curl -sk -o /dev/null -w '%{http_code}' "https://$1/readyz"; }
one_ready() { [ "$(readyz "$addr1")$(readyz "$addr2")" = 200503 ] || [ "$(readyz "$addr1")$(readyz "$addr2")" = 503200 ]; }
wait_for "exactly one manager ready" one_ready
if [ "$(readyz "$addr1")" = 200 ]; then
    leader=$m1 standby_addr=$addr2 standby=2
else
    leader=$m2 standby_addr=$addr1 standby=1
fi
wait_for "APIService Available" nodemetrics_available

# --- slo-controller-config -> NodeSLOs; broken key -> Warning Event, NodeSLOs kept; fixed.
suppress() { kubectl get nodeslo "$1" -o jsonpath='{.spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent}'; }
suppress_is() { [ "$(suppress node-a)" = "$1" ] && [ "$(suppress node-b)" = "$1" ]; }
wait_for "NodeSLOs with cpuSuppressThresholdPercent 55" suppress_is 55
k patch configmap slo-controller-config -n koordinator-system --type merge \
    -p '{"data":{"resource-threshold-config":"{\"clusterStrategy\": {broken"}}'
expect_rc 0 "break resource-threshold-config"
warning() {
    kubectl get events -n koordinator-system --field-selector involvedObject.name=slo-controller-config \
        -o jsonpath='{range .items[*]}{.type} {.reason}{"\n"}{end}' | grep -q '^Warning '
}
wait_for "Warning Event on the ConfigMap" warning
k get events -n koordinator-system --field-selector involvedObject.name=slo-controller-config \
    -o jsonpath='{range .items[*]}{.type} {.reason}: {.message}{"\n"}{end}'
expect_out "Warning SLOCfgUnmarshalFailed: failed to unmarshal ThresholdCfg" "the Event (upstream's reason and message)"
suppress_is 55 || fail "NodeSLOs changed by a broken key: $(suppress node-a) $(suppress node-b)"
k patch configmap slo-controller-config -n koordinator-system --type merge \
    -p '{"data":{"resource-threshold-config":"{\"clusterStrategy\": {\"enable\": true, \"cpuSuppressThresholdPercent\": 45}}"}}'
wait_for "NodeSLOs updated to 45 once fixed" suppress_is 45

# --- NodeMetrics through aggregation; the node's own identity; another node's is 403.
report() { # report NODE_CRED NODE CPU
    printf '{"nodeMetric":{"nodeUsage":{"resources":{"cpu":"%s","memory":"4Gi"}},"systemUsage":{"resources":{"cpu":"500m","memory":"1Gi"}}},"podsMetric":[]}' \
        "$3" >"$TMP/status-$1.json"
    run "$KOORD" report --kubeconfig "$TMP/kubeconfig-$1" --node "$2" -f "$TMP/status-$1.json"
}
k get $NM
expect_out "node-a" "kubectl get nodemetrics through the API server"
expect_out "node-b" "kubectl get nodemetrics through the API server"
kubectl get $NM -w -o jsonpath='{.metadata.name} {.status.nodeMetric.nodeUsage.resources.cpu}{"\n"}' \
    >"$TMP/watch.out" 2>&1 &
watcher=$!
report a node-a 1234m
expect_rc 0 "node-a reports for itself"
report b node-b 2345m
expect_rc 0 "node-b reports for itself"
report a node-b 999m
expect_rc 1 "node-a reporting for node-b"
expect_out 'User "system:node:node-a" cannot update resource "nodemetrics/status"' "node-a reporting for node-b"
wait_for "the watch sees node-a's report" grep -q "^node-a 1234m" "$TMP/watch.out"
wait_for "the watch sees node-b's report" grep -q "^node-b 2345m" "$TMP/watch.out"
grep -q "999m" "$TMP/watch.out" && fail "a refused report was served"
# With a fresh discovery cache the short name resolves to the aggregated group, as in a cluster.
k --cache-dir "$TMP/kcache" get nodemetrics node-b -o jsonpath='{.apiVersion} {.status.nodeMetric.nodeUsage.resources.cpu}'
expect_out "metrics.koordinator.sh/v1alpha1 2345m" "kubectl get nodemetrics (short name)"

# --- batch resources: 8000 - 40% - 500m system = 4300 while node-a reports; gone after the
# 6 s degrade window once it stops.
batch_cpu() {
    [ "$(kubectl get node node-a -o jsonpath='{.status.allocatable.kubernetes\.io/batch-cpu}')" = "$1" ]
}
(while :; do "$KOORD" report --kubeconfig "$TMP/kubeconfig-a" --node node-a -f "$TMP/status-a.json" >/dev/null 2>&1; sleep 0.5; done) &
reporter=$!
wait_for "batch-cpu 4300 on node-a" batch_cpu 4300
kill $reporter
wait $reporter 2>/dev/null || true
reporter=""
stopped=$(now_ms)
wait_for "batch-cpu removed once reports stop" batch_cpu ""
[ $(($(now_ms) - stopped)) -ge 5000 ] || fail "batch resources removed before the degrade window ($(($(now_ms) - stopped)) ms)"

# --- failover: kill -9 the leader.
oldrv=$(kubectl get --raw "/$GV/nodemetrics" | grep -o '"resourceVersion":"[0-9]*"' | head -1 | grep -o '[0-9]*')
[ -n "$oldrv" ] && [ "$oldrv" -ge 1099511627776 ] && [ "$oldrv" -lt 2199023255552 ] ||
    fail "list resourceVersion $oldrv is not of term 1"
kill -9 $leader
killed=$(now_ms)
[ "$leader" = "$m1" ] && m1="" || m2=""
new_leader_ready() { [ "$(readyz "$standby_addr")" = 200 ]; }
wait_for "manager $standby takes over" new_leader_ready
took=$(($(now_ms) - killed))
# As client-go's elector, the standby dates the last renewal by when it saw it, waits the lease
# duration from then, and acquires at a later try; it tries every retry period jittered by up
# to 1.2x (1-2.2 s here): at most LEASE + 2 x 2.2 s after the kill, then it starts its
# controllers (1.5 s allowed).
[ "$took" -le $((LEASE * 1000 + 2 * 2200 + 1500)) ] || fail "takeover took $took ms (lease ${LEASE} s)"
echo "takeover after $took ms"
wait_for "APIService Available again" nodemetrics_available
# The watch of the old term ended with its server; resuming it from the old resourceVersion
# is refused with 410, and the relist is of the new term.
wait_for "the old watch ended" sh -c "! kill -0 $watcher"
watcher=""
run kubectl get --raw "/$GV/nodemetrics?watch=1&resourceVersion=$oldrv&timeoutSeconds=5"
expect_out "(Expired): too old resource version: $oldrv" "watch from the old term"
newrv=$(kubectl get --raw "/$GV/nodemetrics" | grep -o '"resourceVersion":"[0-9]*"' | head -1 | grep -o '[0-9]*')
[ -n "$newrv" ] && [ "$newrv" -ge 2199023255552 ] && [ "$newrv" -lt 3298534883328 ] ||
    fail "relist resourceVersion $newrv is not of term 2"
# Nothing of the old leader's memory is served: no status until the node reports again.
k get $NM node-a -o jsonpath='{.status.nodeMetric.nodeUsage.resources.cpu}'
expect_rc 0 "get node-a after failover"
[ ! -s "$TMP/out" ] || fail "stale status served after failover: $(cat "$TMP/out")"
report a node-a 1500m
expect_rc 0 "reports resume after failover"
k get $NM node-a -o jsonpath='{.status.nodeMetric.nodeUsage.resources.cpu} {.metadata.resourceVersion}'
expect_out "1500m 2199023255" "the new leader serves the new report in term 2"
finish
