#!/bin/bash
# koord apiserver driven by the real kubectl: discovery, CRDs from deploy/crds, the valid
# examples, get/delete, schema violations rejected with the field path, and every object
# surviving kill -9 of the server. (Watch, patch and Table output come with later work.)
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"
command -v kubectl >/dev/null || { echo "kubectl not installed; skipping"; exit 0; }

data="$TMP/data"
start_server() {
    rm -f "$TMP/ready"
    "$KOORD" apiserver --data-dir "$data" --listen 127.0.0.1:0 --ready-file "$TMP/ready" \
        --write-kubeconfig "$TMP/kubeconfig" >>"$TMP/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 200); do
        [ -s "$TMP/ready" ] && return 0
        kill -0 "$pid" 2>/dev/null || { cat "$TMP/server.log"; fail "server exited"; return 1; }
        sleep 0.05
    done
    fail "server not ready after 10 s"
}
trap 'kill -9 $pid 2>/dev/null || true; rm -rf "$TMP"' EXIT
export KUBECONFIG="$TMP/kubeconfig"
k() { run kubectl --request-timeout=20s "$@"; }

start_server
k get --raw /healthz
expect_rc 0 "healthz"
expect_out "ok" "healthz"
k get namespaces
expect_rc 0 "get namespaces"
for ns in default kube-system koordinator-system; do expect_out "$ns" "get namespaces"; done
k api-resources
expect_rc 0 "api-resources"
expect_out "pods" "api-resources"
expect_out "leases" "api-resources"

k create -f deploy/crds/
expect_rc 0 "create CRDs"
expect_out "customresourcedefinition.apiextensions.k8s.io/nodeslos.slo.koordinator.sh created" "create CRDs"
k api-resources --api-group=slo.koordinator.sh
expect_out "nodeslos" "CRD kinds in discovery"

# Every valid example (the koordinator-system Namespace example exists from the start).
args=(-f examples/seed/ -f examples/reference/ -f examples/nodes/)
for f in examples/core/*.yaml; do
    [ "$f" = examples/core/namespace.yaml ] || args+=(-f "$f")
done
k create "${args[@]}"
expect_rc 0 "create examples"
expect_out "reservation.scheduling.koordinator.sh/reservation-sample created" "create examples"
expect_out "pod/gated-web-0 created" "create examples"
k create -f examples/core/namespace.yaml
expect_rc 1 "namespace that exists"
expect_out 'namespaces "koordinator-system" already exists' "namespace that exists"
k get reservations
expect_out "batch-job-reservation" "get reservations"
k get recom -n default -o jsonpath='{.items[*].metadata.name}'
expect_out "example-recommendation" "get recom via short name"
k get nodeslo production-node-slo -o yaml
expect_out "cpuSuppressThresholdPercent: 70" "get -o yaml"
expect_out "resourceVersion:" "get -o yaml"

# Schema violations are refused with the field path.
k create -f examples/invalid/nodeslo-percent-over-100.yaml
expect_rc 1 "invalid NodeSLO"
expect_out "spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent" "invalid NodeSLO"
k create -f examples/invalid/pod-gate-with-nodename.yaml
expect_rc 1 "gated pod with nodeName"
expect_out "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared" "gated pod"
k create -f examples/invalid/reservation-missing-owners.yaml
expect_rc 1 "reservation without owners"
expect_out "spec.owners: Required value" "reservation without owners"

# Delete, then the object is gone.
k delete reservation batch-job-reservation
expect_rc 0 "delete"
k get reservation batch-job-reservation
expect_rc 1 "get deleted"
expect_out 'NotFound' "get deleted"

# kill -9 and restart: every acknowledged object is still there, and CRDs are served again.
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
start_server
k get reservations,nodeslos,nodemetrics -A -o name
expect_rc 0 "after restart"
expect_out "reservation.scheduling.koordinator.sh/reservation-sample" "after restart"
expect_out "nodeslo.slo.koordinator.sh/production-node-slo" "after restart"
k get pods -n default -o name
expect_out "pod/gated-web-0" "pods after restart"
kill "$pid"
wait "$pid" 2>/dev/null || true
finish
