#!/bin/bash
# koord scheduler's Koordinator admission plugins against a real koord apiserver, with kubectl:
# a pod labelled scheduling.koordinator.sh/schedule-admission-* waits gated and unattempted
# until the label goes, then binds (ScheduleAdmission); pods over their ElasticQuota wait gated,
# unattempted, with a PodScheduled condition naming the quota, the quota's status.used and
# runtime are written back, and when room frees the higher-priority waiting pod binds next
# while the other keeps waiting (ElasticQuota). The profile comes from --config with upstream's
# plugin names and ElasticQuotaArgs. Waits poll with deadlines.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || skip "kubectl not installed"
command -v curl >/dev/null || skip "curl not installed"

start_apiserver "$TMP/data"
s1=""
trap 'kill -9 $pid $s1 2>/dev/null || true; rm -rf "$TMP"' EXIT
k apply -f "$KOORD_SOURCE_DIR/deploy/crds/" -f "$KOORD_SOURCE_DIR/deploy/priorityclasses.yaml"
expect_rc 0 "apply CRDs and priority classes"
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: koordinator-system}\n' >"$TMP/ns.yaml"
k apply -f "$TMP/ns.yaml"
expect_rc 0 "koordinator-system"
cat >"$TMP/objs.yaml" <<'EOF2'
apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels: {kubernetes.io/hostname: node-a}
status:
  allocatable: {cpu: "8", memory: 16Gi, pods: "110"}
  capacity: {cpu: "8", memory: 16Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: team
  namespace: default
  labels: {quota.scheduling.koordinator.sh/parent: koordinator-root-quota}
spec:
  min: {cpu: "0", memory: "0"}
  max: {cpu: "1", memory: 10Gi}
EOF2
k create -f "$TMP/objs.yaml"
expect_rc 0 "create the node, a priority class and the quota"

cat >"$TMP/sched.yaml" <<'EOF2'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
profiles:
- schedulerName: koord-scheduler
  plugins:
    preEnqueue: {enabled: [{name: ScheduleAdmission}, {name: ElasticQuota}]}
    preFilter: {enabled: [{name: ElasticQuota}]}
    postFilter:
      disabled: [{name: "*"}]
      enabled: [{name: ElasticQuota}, {name: DefaultPreemption}]
    reserve: {enabled: [{name: ElasticQuota}]}
  pluginConfig:
  - name: ElasticQuota
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: ElasticQuotaArgs
      enableRuntimeQuota: true
      quotaGroupNamespace: koordinator-system
EOF2
"$KOORD" scheduler --config "$TMP/sched.yaml" --listen 127.0.0.1:0 \
    --ready-file "$TMP/s1.ready" --log-level debug >>"$TMP/s1.log" 2>&1 &
s1=$!
wait_for "scheduler listening" test -s "$TMP/s1.ready"
saddr=$(cat "$TMP/s1.ready")
wait_for "scheduler ready" curl -sf "http://$saddr/readyz"
metric() { curl -sf "http://$saddr/metrics" | grep -F "$1" | awk '{print $2}'; }
attempts() { # every scheduling attempt of the profile, whatever its result
    curl -sf "http://$saddr/metrics" | grep -F 'scheduler_schedule_attempts_total{profile="koord-scheduler"' |
        awk '{s += $2} END {print s + 0}'
}
gated_is() { [ "$(metric 'scheduler_pending_pods{queue="gated"}')" = "$1" ]; }
node_of() { kubectl get pod "$1" -o jsonpath='{.spec.nodeName}'; }
bound() { [ -n "$(node_of "$1")" ]; }

# pod NAME CPU [LABELS] [SPEC LINES...]: a pod for koord-scheduler.
pod() {
    local name=$1 cpu=$2 labels=${3:-}
    shift 3 || shift $#
    {
        cat <<EOF2
apiVersion: v1
kind: Pod
metadata: {name: $name, labels: {app: $name${labels:+, $labels}}}
spec:
  schedulerName: koord-scheduler
  terminationGracePeriodSeconds: 0
  containers: [{name: c, image: pause, resources: {requests: {cpu: $cpu}}}]
EOF2
        for l in "$@"; do echo "  $l"; done
    } >"$TMP/pod-$name.yaml"
    k create -f "$TMP/pod-$name.yaml"
    expect_rc 0 "create pod $name"
}

# 1. ScheduleAdmission: held while the label is there, counted as gated, never attempted; a pod
# created after it binds first (FIFO at equal priority: had the held pod been let in, it would
# have been attempted before); removing the label admits it.
pod held 100m "scheduling.koordinator.sh/schedule-admission-test: \"true\""
wait_for "held pod counted as gated" gated_is 1
before=$(attempts)
pod sentinel1 100m
wait_for "sentinel1 bound" bound sentinel1
[ -z "$(node_of held)" ] || fail "a pod with a schedule-admission label was bound"
[ "$(attempts)" = "$((before + 1))" ] || fail "the held pod was attempted ($(attempts) attempts, want $((before + 1)))"
k label pod held scheduling.koordinator.sh/schedule-admission-test-
expect_rc 0 "remove the admission label"
wait_for "held pod bound once admitted" bound held
wait_for "gated count back to 0" gated_is 0

# 2. The scheduler writes the quota's status back (once it knows the quota, used is 0).
used_is() { [ "$(kubectl get elasticquota team -o jsonpath='{.status.used.cpu}')" = "$1" ]; }
wait_for "team's status.used written" used_is 0

# 3. max cpu 1, three pods of 600m: the first binds; the other two wait gated, unattempted.
qlabel="quota.scheduling.koordinator.sh/name: team"
pod q1 600m "$qlabel"
wait_for "q1 bound" bound q1
wait_for "team's used is q1's 600m" used_is 600m
before=$(attempts)
pod q2 600m "$qlabel"
pod q3 600m "$qlabel" "priorityClassName: high"
wait_for "q2 and q3 gated" gated_is 2
pod sentinel2 100m
wait_for "sentinel2 bound" bound sentinel2
[ -z "$(node_of q2)$(node_of q3)" ] || fail "a pod over its quota was bound"
[ "$(attempts)" = "$((before + 1))" ] || fail "pods over quota were attempted ($(attempts) attempts, want $((before + 1)))"
cond() { kubectl get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].'"$2"'}'; }
waiting_reason() { [ "$(cond q2 reason)" = WaitingForQuota ]; }
wait_for "q2's PodScheduled reason" waiting_reason
cond q2 message >"$TMP/out"
expect_out "waiting for room in ElasticQuota default/team: Insufficient quotas, quotaName: team, runtime: map[cpu:1 memory:0], used: map[cpu:600m memory:0], pod's request: map[cpu:600m memory:0], exceedDimensions: [cpu]" "q2's PodScheduled message names the quota"
runtime_is() { kubectl get elasticquota team -o jsonpath='{.metadata.annotations.quota\.scheduling\.koordinator\.sh/runtime}' | grep -qF "$1"; }
wait_for "team's runtime annotation" runtime_is '"cpu":"1"'

# 4. q1 goes: the higher-priority q3 binds next; q2 keeps waiting, still unattempted.
before=$(attempts)
k delete pod q1 --wait=false
expect_rc 0 "delete q1"
wait_for "q3 (high priority) bound after q1 left" bound q3
wait_for "q2 still gated alone" gated_is 1
pod sentinel3 100m
wait_for "sentinel3 bound" bound sentinel3
[ -z "$(node_of q2)" ] || fail "q2 bound although q3 took the room"
[ "$(attempts)" = "$((before + 2))" ] || fail "q2 was attempted ($(attempts) attempts, want $((before + 2)))"
wait_for "team's used is q3's 600m" used_is 600m

# 5. Raising max lets q2 in.
k patch elasticquota team --type merge -p '{"spec":{"max":{"cpu":"2","memory":"10Gi"}}}'
expect_rc 0 "raise team's max"
wait_for "q2 bound after max was raised" bound q2
wait_for "gated count back to 0 at the end" gated_is 0
wait_for "team's used is 1200m" used_is 1200m

finish
