#!/bin/bash
# koord scheduler against a real koord apiserver, driven by kubectl: gated pods wait without an
# attempt and are bound once their last gate goes; a pod too big for every node gets
# FailedScheduling with kube-scheduler's message and is placed when a large enough node
# appears; batch pods land only where batch resources have room; taints and node affinity hold;
# a high-priority pod preempts a lower one; killing the leader hands over without double
# binding. Waits poll with deadlines.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || skip "kubectl not installed"
command -v curl >/dev/null || skip "curl not installed"

start_apiserver "$TMP/data"
s1="" s2=""
trap 'kill -9 $pid $s1 $s2 2>/dev/null || true; rm -rf "$TMP"' EXIT
k apply -f "$KOORD_SOURCE_DIR/deploy/priorityclasses.yaml"
expect_rc 0 "apply priority classes"
# (kubectl create namespace sends protobuf, which koord apiserver does not read yet.)
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: koordinator-system}\n' >"$TMP/ns.yaml"
k apply -f "$TMP/ns.yaml"
expect_rc 0 "koordinator-system"

# node NAME CPU MEMORY [BATCH_CPU] [extra spec YAML]: a Ready node.
node() {
    local batch=""
    [ -n "${4:-}" ] && batch="kubernetes.io/batch-cpu: \"$4\", kubernetes.io/batch-memory: 8Gi,"
    cat >"$TMP/node-$1.yaml" <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $1
  labels: {kubernetes.io/hostname: $1, topology.kubernetes.io/zone: zone-$1}
spec: {${5:-}}
status:
  allocatable: {$batch cpu: "$2", memory: $3, pods: "110"}
  capacity: {$batch cpu: "$2", memory: $3, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
EOF
    k create -f "$TMP/node-$1.yaml"
    expect_rc 0 "create node $1"
}
node node-a 4 8Gi 4000
node node-b 4 8Gi "" 'taints: [{key: dedicated, value: gpu, effect: NoSchedule}]'
node node-c 2 4Gi

# Leader election with short timings, from a configuration file (the --config path).
cat >"$TMP/sched.yaml" <<'EOF'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  resourceNamespace: koordinator-system
  resourceName: koord-scheduler
  leaseDuration: 3s
  renewDeadline: 2s
  retryPeriod: 1s
profiles:
- schedulerName: koord-scheduler
- schedulerName: default-scheduler
EOF
start_scheduler() { # NAME: starts a scheduler, its pid in $spid, its address in $TMP/NAME.ready
    rm -f "$TMP/$1.ready"
    "$KOORD" scheduler --config "$TMP/sched.yaml" --listen 127.0.0.1:0 \
        --ready-file "$TMP/$1.ready" --log-level debug >>"$TMP/$1.log" 2>&1 &
    spid=$!
    wait_for "scheduler $1 listening" test -s "$TMP/$1.ready"
}
start_scheduler s1
s1=$spid
saddr=$(cat "$TMP/s1.ready")
wait_for "scheduler ready" curl -sf "http://$saddr/readyz"
metric() { curl -sf "http://$saddr/metrics" | grep -F "$1" | awk '{print $2}'; }
leader() { kubectl get lease -n koordinator-system koord-scheduler -o jsonpath='{.spec.holderIdentity}'; }
leads() { [ -n "$(leader)" ]; }
wait_for "scheduler leads" leads
node_of() { kubectl get pod "$1" -o jsonpath='{.spec.nodeName}'; }
bound_to() { [ "$(node_of "$1")" = "$2" ]; }
bound() { [ -n "$(node_of "$1")" ]; }

# pod NAME [spec YAML lines]: a pod for koord-scheduler.
pod() {
    local name=$1
    shift
    {
        cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $name, labels: {app: $name}}
spec:
  schedulerName: koord-scheduler
  terminationGracePeriodSeconds: 0
EOF
        for l in "$@"; do echo "  $l"; done
        [ "$*" = "${*#*containers}" ] &&
            echo "  containers: [{name: c, image: pause, resources: {requests: {cpu: 100m, memory: 100Mi}}}]"
        true
    } >"$TMP/pod-$name.yaml"
    k create -f "$TMP/pod-$name.yaml"
    expect_rc 0 "create pod $name"
}

# 1. A plain pod is bound, with the Scheduled event of kube-scheduler's wording.
pod plain
wait_for "plain bound" bound plain
k get events --field-selector involvedObject.name=plain -o jsonpath='{.items[*].message}'
expect_out "Successfully assigned default/plain to" "Scheduled event"

# 2. A gated pod: SchedulingGated, never attempted (the attempt counter does not move), counted
# as gated; removing its last gate gets it bound.
attempts_before=$(metric 'scheduler_schedule_attempts_total{profile="koord-scheduler",result="scheduled"}')
pod gated 'schedulingGates: [{name: example.com/one}, {name: example.com/two}]'
gated_is() { [ "$(metric 'scheduler_pending_pods{queue="gated"}')" = "$1" ]; }
wait_for "gated pod counted as gated" gated_is 1
k get pod gated
expect_out "SchedulingGated" "kubectl shows SchedulingGated"
k patch pod gated --type json -p '[{"op":"remove","path":"/spec/schedulingGates/0"}]'
expect_rc 0 "remove the first gate"
# A pod created after that update is queued after it (one watch stream, FIFO at equal
# priority): once it is bound, the update has been seen, and had it freed the gated pod that pod
# would have been attempted first.
pod sentinel1
wait_for "sentinel1 bound" bound sentinel1
[ -z "$(node_of gated)" ] || fail "a pod with a gate left was bound"
[ "$(metric 'scheduler_schedule_attempts_total{profile="koord-scheduler",result="scheduled"}')" = "$((attempts_before + 1))" ] ||
    fail "a gated pod was attempted"
k patch pod gated --type json -p '[{"op":"remove","path":"/spec/schedulingGates"}]'
expect_rc 0 "remove the last gate"
wait_for "gated pod bound once ungated" bound gated
wait_for "gated count back to 0" gated_is 0

# 3. Too big for every node: FailedScheduling with the FitError message, PodScheduled=False;
# scheduled once a large enough node is added.
pod big 'containers: [{name: c, image: pause, resources: {requests: {cpu: "6"}}}]'
failed() { kubectl get events --field-selector involvedObject.name=big,reason=FailedScheduling \
    -o jsonpath='{.items[*].message}' | grep -qF "$1"; }
wait_for "FailedScheduling for big" failed "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu."
wait_for "preemption part of the message" failed "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
k get pod big -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}'
expect_out "Unschedulable" "PodScheduled reason"
node node-d 8 16Gi
wait_for "big bound to the new node" bound_to big node-d

# 4. A batch pod lands only where batch resources allow (node-a has 4000 batch-cpu).
pod batch1 'containers: [{name: c, image: pause, resources: {requests: {kubernetes.io/batch-cpu: "3000", kubernetes.io/batch-memory: 1Gi}}}]'
wait_for "batch1 on node-a" bound_to batch1 node-a
pod batch2 'containers: [{name: c, image: pause, resources: {requests: {kubernetes.io/batch-cpu: "2000", kubernetes.io/batch-memory: 1Gi}}}]'
batch2_failed() { kubectl get events --field-selector involvedObject.name=batch2,reason=FailedScheduling \
    -o jsonpath='{.items[*].message}' | grep -qF "Insufficient kubernetes.io/batch-cpu"; }
wait_for "batch2 refused for batch-cpu" batch2_failed
[ -z "$(node_of batch2)" ] || fail "batch2 bound although no node has 2000 batch-cpu left"
# Deleting batch1 frees the room (an assigned-pod delete moves the pod back).
k delete pod batch1 --wait=false
wait_for "batch2 on node-a after batch1 left" bound_to batch2 node-a

# 5. Taints and node affinity: only a tolerating pod reaches node-b; required affinity holds.
pod tol 'tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]' \
    'nodeSelector: {topology.kubernetes.io/zone: zone-node-b}'
wait_for "tolerating pod on node-b" bound_to tol node-b
pod aff 'affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-c]}]}]}}}'
wait_for "affinity pod on node-c" bound_to aff node-c

# 6. Malformed input: affinity the API server stores as given but that cannot be evaluated gets
# FailedScheduling naming the field; an unknown scheduler name is left alone.
pod badaff 'affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: rank, operator: Gt, values: [high]}]}]}}}'
badaff_failed() { kubectl get events --field-selector involvedObject.name=badaff,reason=FailedScheduling \
    -o jsonpath='{.items[*].message}' | grep -qF "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: "; }
wait_for "FailedScheduling naming the bad affinity field" badaff_failed
k delete pod badaff --wait=false
pod other 'schedulerName: someone-else'
pod sentinel2
wait_for "sentinel2 bound" bound sentinel2
[ -z "$(node_of other)" ] || fail "a pod of another scheduler was bound"

# 7. Preemption: node-c (2 cpu) full of a low-priority pod; a high-priority pod that fits only
# there after eviction preempts it and is bound after the victim is gone.
k delete pod aff plain --wait=false
cat >"$TMP/pc.yaml" <<'EOF'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
EOF
k create -f "$TMP/pc.yaml"
expect_rc 0 "create priority class high"
pod low 'nodeSelector: {kubernetes.io/hostname: node-c}' \
    'containers: [{name: c, image: pause, resources: {requests: {cpu: "1500m"}}}]'
wait_for "low on node-c" bound_to low node-c
pod high 'priorityClassName: high' 'nodeSelector: {kubernetes.io/hostname: node-c}' \
    'containers: [{name: c, image: pause, resources: {requests: {cpu: "1500m"}}}]'
gone() { ! kubectl get pod "$1" >/dev/null 2>&1; }
wait_for "the low-priority victim deleted" gone low
wait_for "high nominated or bound to node-c" bound_to high node-c
k get events --field-selector involvedObject.name=low,reason=Preempted -o jsonpath='{.items[*].message}'
expect_out "Preempted by pod" "Preempted event on the victim"

# 8. Leader handover: a second scheduler waits; kill -9 the first; the second takes the Lease
# and schedules new pods; no pod is bound twice (the binding subresource refuses a second
# binding, so a double bind would show as a failed binding in the log).
start_scheduler s2
s2=$spid
first=$(leader)
kill -9 "$s1"
leader_changed() { [ "$(leader)" != "$first" ]; }
wait_for "the second scheduler leads" leader_changed
pod after
wait_for "a pod bound by the new leader" bound after
grep -q "binding pod .* failed" "$TMP/s2.log" && fail "the new leader saw a failed binding"

finish
