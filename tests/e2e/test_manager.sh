#!/bin/bash
# koord manager against a real koord apiserver, driven by kubectl and koord report: it leads,
# writes a NodeSLO per Node, serves the NodeMetric API from memory (readable with kubectl,
# writable by the node's own identity only), and puts the batch resources of
# manager-behaviour.md 4.4 on the Node once colocation is enabled. Waits poll with deadlines.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 0; }

start_apiserver "$TMP/data"
mpid=""
trap 'kill -9 $pid $mpid 2>/dev/null || true; rm -rf "$TMP"' EXIT
k apply -f "$KOORD_SOURCE_DIR/deploy/crds/"
expect_rc 0 "apply CRDs"
k create -f "$KOORD_SOURCE_DIR/examples/nodes/node-plain.yaml"
expect_rc 0 "create node"

"$KOORD" manager --listen 127.0.0.1:0 --webhook-listen 127.0.0.1:0 --ready-file "$TMP/mready" --cert-dir "$TMP/m" \
    --client-ca-file "$TMP/data/pki/ca.crt" --leader-election-lease-duration 3 \
    --leader-election-renew-deadline 2 --leader-election-retry-period 1 \
    >>"$TMP/manager.log" 2>&1 &
mpid=$!
wait_for "manager listening" test -s "$TMP/mready"
maddr=$(cat "$TMP/mready")
mca="$TMP/m/koord-manager-ca.crt"
wait_for "manager ready" curl -sfk "https://$maddr/readyz"
wait_for "NodeSLO for the node" kubectl get nodeslo plain-node

# A status report from the node's own identity is accepted; another node's is 403.
cat >"$TMP/status.json" <<'EOF'
{"nodeMetric":{"nodeUsage":{"resources":{"cpu":"1500m","memory":"6Gi"}},
 "systemUsage":{"resources":{"cpu":"500m","memory":"1Gi"}}},"podsMetric":[]}
EOF
run "$KOORD" report --node plain-node -f "$TMP/status.json" --server "https://$maddr" \
    --certificate-authority "$mca"
expect_rc 0 "admin report"
run "$KOORD" report --node no-such-node -f "$TMP/status.json" --server "https://$maddr" \
    --certificate-authority "$mca"
expect_rc 1 "report for a node without a NodeMetric"
k --server "https://$maddr" --certificate-authority "$mca" get nodemetrics.metrics.koordinator.sh
expect_rc 0 "kubectl get nodemetrics from the manager"
expect_out "plain-node" "kubectl get nodemetrics from the manager"
k --server "https://$maddr" --certificate-authority "$mca" \
    get nodemetrics.metrics.koordinator.sh plain-node -o jsonpath='{.status.nodeMetric.nodeUsage.resources.cpu} {.metadata.resourceVersion}'
expect_out "1500m 10995116277" "NodeMetric status and a term-1 resourceVersion"
# Clients cannot create or delete NodeMetrics: the manager owns them.
k --server "https://$maddr" --certificate-authority "$mca" delete nodemetrics.metrics.koordinator.sh plain-node
expect_rc 1 "delete nodemetric"
expect_out "MethodNotAllowed" "delete nodemetric"

# Colocation on: batch resources of 4.4 on the Node (32 cores, 128Gi, reclaim 60/65, system
# usage 500m/1Gi, no pods): 32000 - 12800 - 500 = 18700; 128Gi - 35% - 1Gi = 88261577933.
cat >"$TMP/cm.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: slo-controller-config, namespace: koordinator-system}
data:
  colocation-config: '{"enable": true}'
EOF
k create -f "$TMP/cm.yaml"
expect_rc 0 "create slo-controller-config"
batch_cpu() {
    [ "$(kubectl get node plain-node -o jsonpath='{.status.allocatable.kubernetes\.io/batch-cpu}')" = "$1" ]
}
wait_for "batch-cpu 18700 on the node" batch_cpu 18700
k get node plain-node -o jsonpath='{.status.capacity.kubernetes\.io/batch-memory}'
expect_out "88261577933" "batch-memory in capacity"
# Colocation off again: both resources removed.
k patch configmap slo-controller-config -n koordinator-system --type merge \
    -p '{"data":{"colocation-config":"{\"enable\": false}"}}'
expect_rc 0 "disable colocation"
wait_for "batch-cpu removed" batch_cpu ""

run curl -sfk "https://$maddr/metrics"
expect_out "koord_manager_leader 1" "/metrics"
expect_out "koord_manager_nodemetric_reports_total 1" "/metrics"

# An Endpoints address must be an IP: a host name is refused before anything starts.
run "$KOORD" manager --listen 127.0.0.1:0 --webhook-listen 127.0.0.1:0 --cert-dir "$TMP/m" --register-apiservice localhost:9443
expect_rc 1 "--register-apiservice with a host name"
expect_out "cannot start: " "--register-apiservice with a host name"

# SIGTERM: clean stop, the Lease released (holder cleared).
kill -TERM "$mpid"
wait "$mpid" || fail "manager exit status $?"
mpid=""
k get lease -n koordinator-system koordinator-manager -o jsonpath='{.spec.holderIdentity}'
[ ! -s "$TMP/out" ] || fail "lease still held: $(cat "$TMP/out")"
finish
