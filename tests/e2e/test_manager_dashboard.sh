#!/bin/bash
# koord manager's /ui dashboard in a real browser (issue 19 §4): koord apiserver, koord manager
# and koord scheduler run; the test feeds a NodeMetric report (koord report), a pod no node can
# hold (the scheduler marks it Unschedulable) and an eviction Event (as koord agent records
# one), then headless chromium (Debian's, driven by playwright-core: dashboard.cjs) logs in
# with a `kubectl create token` token and checks what the page shows: the node's row with the
# report's figures and the Node's batch allocatable, the pending pod with the scheduler's
# reason, the eviction; a second report must show up live, without a reload. The screenshot is
# kept under the build directory (its path is printed). No browser is not a skip: `make deps`
# installs it.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 0; }
need_browser

start_apiserver "$TMP/data"
mpid="" spid=""
trap 'kill -9 $pid $mpid $spid 2>/dev/null || true; rm -rf "$TMP"' EXIT
k apply -f "$KOORD_SOURCE_DIR/deploy/crds/" -f "$KOORD_SOURCE_DIR/deploy/priorityclasses.yaml"
expect_rc 0 "apply CRDs and priority classes"
k create namespace koordinator-system
cat >"$TMP/setup.yaml" <<'EOF2'
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}
status:
  capacity: {cpu: "8", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 16Gi, pods: "110"}
  conditions: [{type: Ready, status: "True", reason: KubeletReady, message: ready}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: slo-controller-config, namespace: koordinator-system}
data:
  colocation-config: '{"enable": true}'
EOF2
k create -f "$TMP/setup.yaml"
expect_rc 0 "create node and colocation config"

"$KOORD" manager --listen 127.0.0.1:0 --webhook-listen 127.0.0.1:0 --ready-file "$TMP/mready" \
    --cert-dir "$TMP/m" --client-ca-file "$TMP/data/pki/ca.crt" \
    --leader-election-lease-duration 3 --leader-election-renew-deadline 2 \
    --leader-election-retry-period 1 >>"$TMP/manager.log" 2>&1 &
mpid=$!
wait_for "manager listening" test -s "$TMP/mready"
maddr=$(cat "$TMP/mready")
mca="$TMP/m/koord-manager-ca.crt"
wait_for "manager ready" curl -sfk "https://$maddr/readyz"

cat >"$TMP/sched.yaml" <<'EOF2'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
profiles: [{schedulerName: default-scheduler}]
EOF2
"$KOORD" scheduler --config "$TMP/sched.yaml" --listen 127.0.0.1:0 --ready-file "$TMP/sready" \
    >>"$TMP/scheduler.log" 2>&1 &
spid=$!
wait_for "scheduler listening" test -s "$TMP/sready"

# node-a's report: system 500m/1Gi, an LS pod 1000m/2Gi, a BE (koord-batch) pod 700m/512Mi.
status() { # SYSTEM_CPU FILE
    cat >"$2" <<EOF2
{"nodeMetric":{"nodeUsage":{"resources":{"cpu":"3","memory":"4Gi"}},
 "systemUsage":{"resources":{"cpu":"$1","memory":"1Gi"}}},
 "podsMetric":[
  {"namespace":"default","name":"ls-1","priority":"koord-prod",
   "podUsage":{"resources":{"cpu":"1000m","memory":"2Gi"}}},
  {"namespace":"default","name":"be-1","priority":"koord-batch",
   "podUsage":{"resources":{"cpu":"700m","memory":"512Mi"}}}]}
EOF2
}
status 500m "$TMP/status.json"
status 900m "$TMP/status900.json"
run "$KOORD" report --node node-a -f "$TMP/status.json" --server "https://$maddr" \
    --certificate-authority "$mca"
expect_rc 0 "first report"

# A pod no node can hold: the scheduler says why.
cat >"$TMP/pods.yaml" <<'EOF2'
apiVersion: v1
kind: Pod
metadata: {name: too-big, namespace: default}
spec:
  containers: [{name: c, image: app, resources: {requests: {cpu: "100", memory: 1Gi}}}]
---
apiVersion: v1
kind: Event
metadata: {name: be-1.evicted, namespace: default}
involvedObject: {kind: Pod, namespace: default, name: be-1, apiVersion: v1}
reason: evictPodSuccess
message: "evict Pod:be-1, reason: BEMemoryEvict, message: node memory usage 75% > 70%"
source: {component: koordlet-qosManager, host: node-a}
type: Normal
count: 1
firstTimestamp: "2026-01-01T00:00:00Z"
lastTimestamp: "2026-01-01T00:00:00Z"
EOF2
k create -f "$TMP/pods.yaml"
expect_rc 0 "create the pending pod and the eviction Event"
unschedulable() {
    [ "$(kubectl get pod too-big -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')" = Unschedulable ]
}
wait_for "the scheduler marks too-big Unschedulable" unschedulable
msg=$(kubectl get pod too-big -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
# The batch allocatable the manager wrote on the Node is what the row must show.
batch_cpu() { kubectl get node node-a -o jsonpath='{.status.allocatable.kubernetes\.io/batch-cpu}'; }
has_batch_cpu() { [ -n "$(batch_cpu)" ]; }
wait_for "batch-cpu on node-a" has_batch_cpu
bcpu=$(batch_cpu)

# The login token: a service account's, as the docs say (any user the API server accepts).
k create token default -n default
expect_rc 0 "kubectl create token"
token=$(cat "$TMP/out")

# Without credentials the data is refused; the static assets are not.
run curl -sk -o /dev/null -w '%{http_code}' "https://$maddr/ui/api/state"
expect_out 401 "state without a session"
run curl -sk -D - -o /dev/null "https://$maddr/ui/app.js"
expect_out "ETag: " "app.js has an ETag"
expect_out "Cache-Control: no-cache" "app.js says how to cache it"
etag=$(grep -i '^etag:' "$TMP/out" | cut -d' ' -f2- | tr -d '\r')
run curl -sk -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "https://$maddr/ui/app.js"
expect_out 304 "app.js revalidated"
# A bearer token on the request works without the login step (kubectl-like clients).
run curl -sfk -H "Authorization: Bearer $token" "https://$maddr/ui/api/state"
expect_rc 0 "state with a bearer token"
expect_out '"name":"node-a"' "state with a bearer token"

shot="$ARTEFACTS/dashboard.png"
rm -f "$shot"
expect=$(printf '{"node":"node-a","lsCpu":1500,"beCpu":700,"lsMemory":%d,"beMemory":%d,"cpu":8000,"batchCpu":%d,"pendingPod":"default/too-big","pendingClass":"LS","pendingReason":"Unschedulable","pendingMessage":"%s","evictedPod":"default/be-1","liveLsCpu":1900}' \
    $((3 * 1024 * 1024 * 1024)) $((512 * 1024 * 1024)) "$bcpu" "$(printf %s "$msg" | sed 's/"/\\"/g')")
run env UI_URL="https://$maddr/ui/" UI_TOKEN="$token" UI_BAD_TOKEN="not-a-token" \
    UI_EXPECT="$expect" UI_SHOT="$shot" CHROMIUM="$CHROMIUM" \
    UI_REPORT="[\"$KOORD\",\"report\",\"--node\",\"node-a\",\"-f\",\"$TMP/status900.json\",\"--server\",\"https://$maddr\",\"--certificate-authority\",\"$mca\"]" \
    node "$KOORD_SOURCE_DIR/tests/e2e/dashboard.cjs"
expect_rc 0 "the dashboard in chromium"
cat "$TMP/out"
[ -s "$shot" ] || fail "no screenshot at $shot"

# A clean stop with a viewer connected: the stream ends, the manager exits 0 (under ASan, with
# nothing leaked).
curl -sNk -H "Authorization: Bearer $token" "https://$maddr/ui/api/stream" >"$TMP/stream" 2>/dev/null &
cpid=$!
wait_for "the stream's snapshot" grep -q '^event: snapshot' "$TMP/stream"
kill -TERM "$mpid"
wait "$mpid" || fail "manager exit status $? on SIGTERM with a stream open; log: $(tail -n 30 "$TMP/manager.log")"
mpid=""
wait "$cpid" 2>/dev/null || true
grep -q "Sanitizer" "$TMP/manager.log" && fail "sanitizer report: $(grep -A20 Sanitizer "$TMP/manager.log")"
finish
