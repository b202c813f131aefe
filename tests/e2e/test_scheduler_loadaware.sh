#!/bin/bash
# LoadAwareScheduling end to end: koord apiserver + koord manager (its NodeMetric API behind the
# API server's aggregation) + koord scheduler with its default profile, driven by kubectl and
# koord report. Of two equal nodes, the one reported hot (7500m of 8 cores, 94 % > the 65 %
# threshold) receives no new pod while the cool one takes them all; a pod that can only go to
# the hot node is refused with upstream's reason, and is placed there once a cooler report
# arrives (the NodeMetric update moves it back to the active queue). Waits poll with deadlines.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || skip "kubectl not installed"
command -v curl >/dev/null || skip "curl not installed"

start_apiserver "$TMP/data"
mpid="" spid=""
trap 'kill -9 $pid $mpid $spid 2>/dev/null || true; rm -rf "$TMP"' EXIT
k apply -f "$KOORD_SOURCE_DIR/deploy/crds/" -f "$KOORD_SOURCE_DIR/deploy/priorityclasses.yaml"
expect_rc 0 "apply CRDs and priority classes"
# (kubectl create namespace sends protobuf, which koord apiserver does not read yet.)
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: koordinator-system}\n' >"$TMP/ns.yaml"
k apply -f "$TMP/ns.yaml"
expect_rc 0 "koordinator-system"
for n in node-hot node-cool; do
    cat >"$TMP/$n.yaml" <<EOF
apiVersion: v1
kind: Node
metadata: {name: $n, labels: {kubernetes.io/hostname: $n}}
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
EOF
    k create -f "$TMP/$n.yaml"
    expect_rc 0 "create $n"
done

# The manager serves NodeMetrics and registers its APIService while it leads.
"$KOORD" manager --kubeconfig "$KUBECONFIG" --listen 127.0.0.1:0 --webhook-listen 127.0.0.1:0 --ready-file "$TMP/m.ready" \
    --cert-dir "$TMP/certs" --register-apiservice 127.0.0.1:0 \
    --leader-election-lease-duration 3 --leader-election-renew-deadline 2 \
    --leader-election-retry-period 1 >>"$TMP/manager.log" 2>&1 &
mpid=$!
wait_for "manager listening" test -s "$TMP/m.ready"
wait_for "APIService Available" nodemetrics_available
NM=nodemetrics.metrics.koordinator.sh
wait_for "NodeMetrics of both nodes" kubectl get $NM node-hot node-cool

# report NODE CPU: one NodeMetric status through the API server's aggregation, as an agent.
report() {
    printf '{"nodeMetric":{"nodeUsage":{"resources":{"cpu":"%s","memory":"4Gi"}}},"podsMetric":[]}' \
        "$2" >"$TMP/status-$1.json"
    run "$KOORD" report --kubeconfig "$KUBECONFIG" --node "$1" -f "$TMP/status-$1.json"
    expect_rc 0 "report $1 at $2"
}
report node-hot 7500m
report node-cool 500m
usage() { kubectl get $NM "$1" -o jsonpath='{.status.nodeMetric.nodeUsage.resources.cpu}'; }
usage_is() { [ "$(usage "$1")" = "$2" ]; }
wait_for "hot report served" usage_is node-hot 7500m
wait_for "cool report served" usage_is node-cool 500m

# The scheduler without --config: its default profile has LoadAwareScheduling. It finds the
# NodeMetric API by discovery when it starts, so it starts once the APIService is there.
"$KOORD" scheduler --leader-elect=false --listen 127.0.0.1:0 --ready-file "$TMP/s.ready" \
    --log-level debug >>"$TMP/scheduler.log" 2>&1 &
spid=$!
wait_for "scheduler listening" test -s "$TMP/s.ready"
saddr=$(cat "$TMP/s.ready")
wait_for "scheduler ready" curl -sf "http://$saddr/readyz"
grep -q "reading NodeMetrics from metrics.koordinator.sh/v1alpha1" "$TMP/scheduler.log" ||
    fail "the scheduler does not read the manager's NodeMetric API: $(cat "$TMP/scheduler.log")"

node_of() { kubectl get pod "$1" -o jsonpath='{.spec.nodeName}'; }
bound_to() { [ "$(node_of "$1")" = "$2" ]; }
# pod NAME [spec YAML lines]: a pod for koord-scheduler requesting 100m and 100Mi.
pod() {
    local name=$1
    shift
    {
        cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $name}
spec:
  schedulerName: koord-scheduler
  terminationGracePeriodSeconds: 0
  containers: [{name: c, image: pause, resources: {requests: {cpu: 100m, memory: 100Mi}}}]
EOF
        for l in "$@"; do echo "  $l"; done
    } >"$TMP/pod-$name.yaml"
    k create -f "$TMP/pod-$name.yaml"
    expect_rc 0 "create pod $name"
}

# 1. New pods land on the cool node, none on the hot one: a pod's estimate is 85 m, and
# 7500m + 85m is 95 % of 8 cores, over 65 %.
for i in 1 2 3 4; do
    pod "p$i"
    wait_for "p$i on node-cool" bound_to "p$i" node-cool
done
k get pods --field-selector spec.nodeName=node-hot -o name
[ -s "$TMP/out" ] && fail "pods bound to the hot node: $(cat "$TMP/out")"

# 2. A pod only the hot node may take is refused with upstream's reason ...
pod pinned 'nodeSelector: {kubernetes.io/hostname: node-hot}'
refused() { kubectl get events --field-selector involvedObject.name=pinned,reason=FailedScheduling \
    -o jsonpath='{.items[*].message}' | grep -qF "$1"; }
wait_for "pinned refused by LoadAwareScheduling" refused "1 node(s) cpu usage exceed threshold"
[ -z "$(node_of pinned)" ] || fail "pinned bound to a hot node"
# ... and bound there once the node reports cool: the NodeMetric update retries it at once
# (well before the 5-minute flush of unschedulable pods).
report node-hot 1000m
wait_for "pinned bound to node-hot once it cooled" bound_to pinned node-hot

finish
