#!/bin/bash
# metrics.k8s.io/v1beta1 served by koord manager from the NodeMetric store (docs/metrics-k8s.md):
# koord apiserver, two managers registering their APIServices (--register-apiservice), usage
# reported with koord report through the API server, then kubectl top nodes / top pods show the
# reported figures (a two-container pod's usage split by its requests), the raw objects have
# metrics-server's shape, label and field selectors select, an unknown node is 404, writes are
# 405, and the standby answers 503 like the NodeMetric API. Waits poll with deadlines.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 0; }

start_apiserver "$TMP/data"
m1="" m2=""
trap 'kill -9 $pid $m1 $m2 2>/dev/null || true; rm -rf "$TMP"' EXIT
k apply -f "$KOORD_SOURCE_DIR/deploy/crds/"
expect_rc 0 "apply CRDs"
# node NAME ZONE: 4 cores, 8Gi allocatable, label zone=ZONE.
node() {
    printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s","labels":{"zone":"%s"}},' "$1" "$2"
    printf '"status":{"capacity":{"cpu":"4","memory":"8Gi","pods":"110"},'
    printf '"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}}\n'
}
node node-a east >"$TMP/node-a.json"
node node-b west >"$TMP/node-b.json"
k create -f "$TMP/node-a.json" -f "$TMP/node-b.json"
expect_rc 0 "create nodes"
printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop"}}' >"$TMP/ns.json"
k create -f "$TMP/ns.json"
expect_rc 0 "create namespace"
cat >"$TMP/pods.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  nodeName: node-a
  containers:
  - {name: nginx, image: nginx}
---
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: shop, labels: {app: db}}
spec:
  nodeName: node-a
  containers:
  - name: main
    image: postgres
    resources: {requests: {cpu: 300m, memory: 3Gi}}
  - name: sidecar
    image: busybox
    resources: {requests: {cpu: 100m, memory: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: moved, namespace: shop, labels: {app: web}}
spec:
  nodeName: node-b
  containers:
  - {name: c, image: nginx}
EOF
k create -f "$TMP/pods.yaml"
expect_rc 0 "create pods"

start_manager() {
    "$KOORD" manager --kubeconfig "$KUBECONFIG" --listen 127.0.0.1:0 --webhook-listen 127.0.0.1:0 \
        --ready-file "$TMP/m$1.ready" --cert-dir "$TMP/certs" --register-apiservice 127.0.0.1:0 \
        --leader-election-lease-duration 3 --leader-election-renew-deadline 2 \
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
standby_addr=$addr2
[ "$(readyz "$addr1")" = 200 ] || standby_addr=$addr1
wait_for "NodeMetric APIService Available" nodemetrics_available
available() {
    [ "$(kubectl get apiservice v1beta1.metrics.k8s.io \
        -o jsonpath='{.status.conditions[?(@.type=="Available")].status} {.spec.service.name}')" = "True koord-manager" ]
}
wait_for "metrics.k8s.io APIService Available" available
nodemetric_exists() { kubectl get nodemetrics.metrics.koordinator.sh "$1" >/dev/null 2>&1; }
wait_for "NodeMetric of node-a" nodemetric_exists node-a
wait_for "NodeMetric of node-b" nodemetric_exists node-b

# Reports through the API server, as agents send them. node-b's report names "moved" too, but
# "moved" is reported by node-a as well: only the entry of the node it is bound to counts.
cat >"$TMP/a.json" <<'EOF'
{"nodeMetric":{"nodeUsage":{"resources":{"cpu":"1500m","memory":"6Gi"}}},
 "podsMetric":[
  {"namespace":"shop","name":"db","podUsage":{"resources":{"cpu":"800m","memory":"2Gi"}}},
  {"namespace":"shop","name":"gone","podUsage":{"resources":{"cpu":"1","memory":"1Gi"}}},
  {"namespace":"shop","name":"moved","podUsage":{"resources":{"cpu":"3","memory":"3Gi"}}},
  {"namespace":"shop","name":"web","podUsage":{"resources":{"cpu":"500m","memory":"600Mi"}}}]}
EOF
cat >"$TMP/b.json" <<'EOF'
{"nodeMetric":{"nodeUsage":{"resources":{"cpu":"250m","memory":"1Gi"}}},
 "podsMetric":[
  {"namespace":"shop","name":"moved","podUsage":{"resources":{"cpu":"100m","memory":"100Mi"}}}]}
EOF
run "$KOORD" report --node node-a -f "$TMP/a.json"
expect_rc 0 "report node-a"
run "$KOORD" report --node node-b -f "$TMP/b.json"
expect_rc 0 "report node-b"

# kubectl top nodes: 1500m of 4 cores = 37%, 6Gi of 8Gi = 75%; 250m = 6%, 1Gi = 12%.
top_nodes() { kubectl top nodes --no-headers 2>&1 | tr -s ' '; }
nodes_shown() { [ "$(top_nodes)" = "$(printf '%s\n' 'node-a 1500m 37% 6144Mi 75% ' 'node-b 250m 6% 1024Mi 12% ')" ]; }
wait_for "kubectl top nodes" nodes_shown || echo "got: $(top_nodes)" >&2
k top nodes -l zone=west --no-headers
expect_rc 0 "top nodes -l zone=west"
[ "$(tr -s ' ' <"$TMP/out")" = "node-b 250m 6% 1024Mi 12% " ] || fail "top nodes -l: $(cat "$TMP/out")"

# kubectl top pods: db 800m / 2Gi; gone (no Pod) is not listed; moved has node-b's figures.
k top pods -n shop --no-headers
expect_rc 0 "top pods"
[ "$(tr -s ' ' <"$TMP/out")" = "$(printf '%s\n' 'db 800m 2048Mi ' 'moved 100m 100Mi ' 'web 500m 600Mi ')" ] ||
    fail "top pods: $(cat "$TMP/out")"
k top pods -n shop -l app=web --no-headers
expect_rc 0 "top pods -l app=web"
[ "$(tr -s ' ' <"$TMP/out")" = "$(printf '%s\n' 'moved 100m 100Mi ' 'web 500m 600Mi ')" ] ||
    fail "top pods -l: $(cat "$TMP/out")"
# Containers of db: 800m by requests 300m:100m = 600m + 200m; 2Gi by 3Gi:1Gi = 1536Mi + 512Mi.
k top pods -n shop db --containers --no-headers
expect_rc 0 "top pods --containers"
[ "$(tr -s ' ' <"$TMP/out")" = "$(printf '%s\n' 'db main 600m 1536Mi ' 'db sidecar 200m 512Mi ')" ] ||
    fail "top pods --containers: $(cat "$TMP/out")"

# The raw objects: metrics-server's shape.
k get --raw /apis/metrics.k8s.io/v1beta1/nodes/node-a
expect_rc 0 "raw NodeMetrics"
shape=$(python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
print(o["kind"], o["apiVersion"], o["metadata"]["name"], o["metadata"]["labels"]["zone"],
      "creationTimestamp" in o["metadata"], o["window"], o["usage"]["cpu"], o["usage"]["memory"],
      o["timestamp"].endswith("Z"))' "$TMP/out")
[ "$shape" = "NodeMetrics metrics.k8s.io/v1beta1 node-a east True 5m0s 1500m 6Gi True" ] ||
    fail "NodeMetrics shape: $shape"
k get --raw /apis/metrics.k8s.io/v1beta1/namespaces/shop/pods/web
expect_rc 0 "raw PodMetrics"
shape=$(python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
print(o["kind"], o["metadata"]["namespace"], o["metadata"]["name"], o["metadata"]["labels"]["app"],
      o["window"], [(c["name"], c["usage"]["cpu"], c["usage"]["memory"]) for c in o["containers"]])' "$TMP/out")
[ "$shape" = "PodMetrics shop web web 5m0s [('nginx', '500m', '600Mi')]" ] || fail "PodMetrics shape: $shape"
k get --raw "/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=metadata.namespace%3Dshop,metadata.name!%3Ddb"
expect_rc 0 "field selector"
names=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kind"], [i["metadata"]["name"] for i in json.load(open(sys.argv[1]))["items"]])' "$TMP/out")
[ "$names" = "PodMetricsList ['moved', 'web']" ] || fail "field selector: $names"
k get --raw "/apis/metrics.k8s.io/v1beta1/nodes?fieldSelector=spec.unschedulable%3Dtrue"
expect_rc 1 "unsupported field"
expect_out "field label not supported: spec.unschedulable" "unsupported field"
k get --raw "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods?labelSelector=app%3Dweb&fieldSelector=metadata.name%3Dweb,spec.nodeName%3Dnode-a"
expect_rc 1 "unsupported field after good selectors"
expect_out "field label not supported: spec.nodeName" "unsupported field after good selectors"
k top pods -n shop web --no-headers
expect_rc 0 "the manager still serves after bad selectors"
# kubectl get asks for a Table: metrics-server's columns Name, cpu, memory (a pod's summed over
# its containers), Window.
k get nodes.metrics.k8s.io --no-headers
expect_rc 0 "kubectl get nodes.metrics.k8s.io"
[ "$(tr -s ' ' <"$TMP/out")" = "$(printf '%s\n' 'node-a 1500m 6Gi 5m0s' 'node-b 250m 1Gi 5m0s')" ] ||
    fail "kubectl get nodes.metrics.k8s.io: $(cat "$TMP/out")"
k get pods.metrics.k8s.io -n shop db
expect_rc 0 "kubectl get pods.metrics.k8s.io"
[ "$(tr -s ' ' <"$TMP/out")" = "$(printf '%s\n' 'NAME CPU MEMORY WINDOW' 'db 800m 2Gi 5m0s')" ] ||
    fail "kubectl get pods.metrics.k8s.io: $(cat "$TMP/out")"
k get --raw /apis/metrics.k8s.io/v1beta1
expect_rc 0 "discovery"
expect_out '"name":"nodes","singularName":"","namespaced":false,"kind":"NodeMetrics","verbs":["get","list"]' "discovery"
k get --raw /apis/metrics.k8s.io/v1beta1/nodes/no-such-node
expect_rc 1 "unknown node"
expect_out "NotFound" "unknown node"
k get --raw /apis/metrics.k8s.io/v1beta1/namespaces/shop/pods/gone
expect_rc 1 "pod without a Pod object"
expect_out "NotFound" "pod without a Pod object"
# Read-only: a write is 405 (through the API server, as the admin).
run kubectl --request-timeout=20s delete --raw /apis/metrics.k8s.io/v1beta1/nodes/node-a
expect_rc 1 "delete NodeMetrics"
expect_out "MethodNotAllowed" "delete NodeMetrics"
# Straight to the leader without credentials: 401; to the standby: 503 like the NodeMetric API.
code=$(curl -sk -o /dev/null -w '%{http_code}' "https://$(cat "$TMP/m1.ready")/apis/metrics.k8s.io/v1beta1/nodes")
[ "$standby_addr" = "$addr1" ] && code=$(curl -sk -o /dev/null -w '%{http_code}' "https://$addr2/apis/metrics.k8s.io/v1beta1/nodes")
[ "$code" = 401 ] || fail "leader without credentials: $code"
code=$(curl -sk -o /dev/null -w '%{http_code}' "https://$standby_addr/apis/metrics.k8s.io/v1beta1/nodes")
[ "$code" = 503 ] || fail "standby: $code"
finish
