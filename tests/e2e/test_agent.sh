#!/bin/bash
# koord agent end to end: koord apiserver, two koord managers behind its aggregation layer, and
# the agent of node-a on a prepared host tree (cgroup v1, cgroupfs, /proc) whose counters a
# writer advances at known rates (node 1.5 cores, pod web 0.5 cores) computed from the clock, so
# the rates are exact whatever the scheduling. The agent reports with node-a's own token through
# the API server (the aggregation layer finds the leading manager):
#  - kubectl get nodemetrics shows the node's and the pods' usage with the expected values;
#  - a NodeSLO with BE suppression on makes the agent shrink the BestEffort cpuset;
#  - kill -9 of the leading manager: the agent's reports reach the new leader within seconds;
#  - /metrics of the agent counts rounds and reports; SIGTERM stops it cleanly.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 0; }
command -v curl >/dev/null || { echo "SKIP: curl not installed"; exit 0; }

NM=nodemetrics.metrics.koordinator.sh
start_node_apiserver
m1="" m2="" agent="" writer=""
cleanup() {
    kill -9 $pid $m1 $m2 $agent $writer 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT

k create -f - <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: node-a}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
EOF
expect_rc 0 "create node-a"
for p in web batch; do
    k create -f - <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $p
  namespace: default
  labels: $([ $p = batch ] && echo '{koordinator.sh/qosClass: BE}' || echo '{}')
spec:
  nodeName: node-a
  priorityClassName: $([ $p = batch ] && echo koord-batch || echo koord-prod)
  containers: [{name: c, image: busybox}]
EOF
    expect_rc 0 "create pod $p"
done
uid() { kubectl get pod "$1" -o jsonpath='{.metadata.uid}'; }
uid_web=$(uid web)
uid_batch=$(uid batch)

# The host tree: pods without requests are BestEffort in kube's terms, so their cgroups sit
# under kubepods/besteffort. Memory: web anon 100 MiB + unevictable 4 KiB; batch 50 MiB.
host="$TMP/host"
cg="$host/cgroup"
mkdir -p "$host/proc"
memstat() {
    printf 'cache 0\nrss %s\nrss_huge 0\nshmem 0\nmapped_file 0\ntotal_cache 8192\ntotal_rss %s\n' "$1" "$1"
    printf 'total_inactive_anon %s\ntotal_active_anon 0\ntotal_inactive_file 4096\n' "$1"
    printf 'total_active_file 4096\ntotal_unevictable %s\n' "$2"
}
for p in "web:$uid_web:104857600:4096" "batch:$uid_batch:52428800:0"; do
    IFS=: read -r _ u anon unev <<<"$p"
    for sub in cpuacct memory cpu; do mkdir -p "$cg/$sub/kubepods/besteffort/pod$u"; done
    memstat "$anon" "$unev" >"$cg/memory/kubepods/besteffort/pod$u/memory.stat"
    printf 'nr_periods 0\nnr_throttled 0\nthrottled_time 0\n' >"$cg/cpu/kubepods/besteffort/pod$u/cpu.stat"
done
mkdir -p "$cg/cpuacct/kubepods/besteffort" "$cg/cpuset/kubepods/besteffort"
echo 0-7 >"$cg/cpuset/kubepods/besteffort/cpuset.cpus"
# MemTotal 32 GiB, MemAvailable 24 GiB: node memory 8 GiB.
printf 'MemTotal:       33554432 kB\nMemFree:        20971520 kB\nMemAvailable:   25165824 kB\n' \
    >"$host/proc/meminfo"
# Counters as functions of time (ns since t0): node ticks at 100 Hz x 1.5 cores, web 0.5
# cores, batch 0.25 cores. Written in place, as the kernel's files change (the agent keeps them
# open); a read that meets a file being rewritten fails and is only a lost sample. The clock is
# bash's own (no fork per step), so the counters lag the time by little even on a loaded machine.
now_ns() { local t=$EPOCHREALTIME; echo $(( ${t%.*} * 1000000000 + 10#${t#*.} * 1000 )); }
t0=$(now_ns)
advance() {
    local el=$(( $(now_ns) - t0 )) d="$cg/cpuacct/kubepods/besteffort"
    printf 'cpu  %d 0 0 1000 0 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0 0 0\n' $((el * 150 / 1000000000)) \
        >"$host/proc/stat"
    echo $((el / 2)) >"$d/pod$uid_web/cpuacct.usage"
    echo $((el / 4)) >"$d/pod$uid_batch/cpuacct.usage"
    echo $((el * 3 / 4)) >"$d/cpuacct.usage"
}
advance
(while :; do advance; sleep 0.05; done) &
writer=$!

start_manager() {
    "$KOORD" manager --kubeconfig "$KUBECONFIG" --listen 127.0.0.1:0 --webhook-listen 127.0.0.1:0 --ready-file "$TMP/m$1.ready" \
        --cert-dir "$TMP/certs" --register-apiservice 127.0.0.1:0 \
        --leader-election-lease-duration 3 --leader-election-renew-deadline 2 \
        --leader-election-retry-period 1 >>"$TMP/m$1.log" 2>&1 &
}
start_manager 1
m1=$!
wait_for "manager 1 listening" test -s "$TMP/m1.ready"
start_manager 2
m2=$!
wait_for "manager 2 listening" test -s "$TMP/m2.ready"
wait_for "APIService Available" nodemetrics_available

# The agent of node-a: its own token; the NodeMetric API through the API server.
token_kubeconfig "$TMP/kubeconfig-a" tok-a
"$KOORD" agent --node-name node-a --kubeconfig "$TMP/kubeconfig-a" --manager-address "https://$server" \
    --cgroup-root "$cg" --proc-root "$host/proc" --sys-root "$host/sys" --cgroup-version v1 \
    --cgroup-driver cgroupfs --resctrl-root "$host/sys/fs/resctrl" \
    --listen 127.0.0.1:0 --ready-file "$TMP/agent.ready" >>"$TMP/agent.log" 2>&1 &
agent=$!
wait_for "agent running" test -s "$TMP/agent.ready"

# in_range V LO HI: V is "<n>m" with LO <= n <= HI.
in_range() { local v=${1%m}; [ -n "$v" ] && [ "$v" -ge "$2" ] && [ "$v" -le "$3" ]; }
nm() { kubectl get $NM node-a -o jsonpath="$1"; }
pods_reported() { [ "$(nm '{.status.podsMetric[*].name}')" = "batch web" ]; }
wait_for "a report with both pods" pods_reported
k get $NM node-a -o jsonpath='{.status.nodeMetric.nodeUsage.resources.memory} {.status.podsMetric[1].podUsage.resources.memory} {.status.podsMetric[1].priority} {.status.podsMetric[0].qos} {.status.podsMetric[0].podUsage.resources.memory}'
read -r node_mem web_mem web_prio batch_qos batch_mem <"$TMP/out" || true # no newline
[ "$node_mem" = 8Gi ] || fail "node memory $node_mem, want 8Gi"
# anon + unevictable = 104857600 + 4096 bytes = 102404Ki
[ "$web_mem" = 102404Ki ] || fail "web memory $web_mem, want 102404Ki"
[ "$web_prio" = koord-prod ] || fail "web priority $web_prio"
[ "$batch_qos" = BE ] || fail "batch qos $batch_qos"
[ "$batch_mem" = 50Mi ] || fail "batch memory $batch_mem"
# CPU rates, checked on a report that averages many samples (below): the first report holds one
# or two, and a writer step late by 0.1 s on a loaded machine moves one sample's rate by 10 %;
# over the samples of ten seconds and more the lateness cancels out (the counters' deltas sum
# to the whole run's).
cpu_check() {
    k get $NM node-a -o jsonpath='{.status.nodeMetric.nodeUsage.resources.cpu} {.status.podsMetric[1].podUsage.resources.cpu} {.status.nodeMetric.systemUsage.resources.cpu}'
    read -r node_cpu web_cpu sys_cpu <"$TMP/out" || true # no newline
    echo "$1: node cpu $node_cpu, web cpu $web_cpu, system cpu $sys_cpu"
    in_range "$node_cpu" "$(($2 * 1500 / 100))" "$(($3 * 1500 / 100))" ||
        fail "$1: node cpu $node_cpu, want about 1500m"
    in_range "$web_cpu" "$(($2 * 500 / 100))" "$(($3 * 500 / 100))" ||
        fail "$1: web cpu $web_cpu, want about 500m"
    # System usage: node - pods = 1.5 - 0.75 cores.
    in_range "$sys_cpu" "$(($2 * 750 / 100))" "$(($3 * 750 / 100))" ||
        fail "$1: system cpu $sys_cpu, want about 750m"
}

# BE CPU suppression (reference 3.1), from the NodeSLO the manager renders: 8 CPUs (the Node's
# capacity: the prepared host has no CPU topology), threshold 65 %: 5200m - non-BE pods 0 (both
# pods are BestEffort) - system 750m = 4450m -> ceil = 5 CPUs for BestEffort.
k create -f - <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: slo-controller-config, namespace: koordinator-system}
data:
  resource-threshold-config: '{"clusterStrategy": {"enable": true, "cpuSuppressThresholdPercent": 65}}'
EOF
expect_rc 0 "enable BE suppression"
be_cpus() { # the number of CPUs in the BestEffort cpuset
    local n=0 part
    for part in $(tr ',' ' ' <"$cg/cpuset/kubepods/besteffort/cpuset.cpus"); do
        case $part in *-*) n=$((n + ${part#*-} - ${part%-*} + 1)) ;; *) n=$((n + 1)) ;; esac
    done
    echo $n
}
be_cpus_is() { [ "$(be_cpus)" = "$1" ]; }
wait_for "BestEffort cpuset suppressed to 5 CPUs" be_cpus_is 5
echo "BestEffort cpuset: $(cat "$cg/cpuset/kubepods/besteffort/cpuset.cpus")"

# Failover: the leader killed; the agent's next report lands on the new leader within seconds
# (its NodeMetric watch sees the new leader's object and reports at once).
if curl -sfk "https://$(cat "$TMP/m1.ready")/readyz" >/dev/null; then leader=$m1; else leader=$m2; fi
kill -9 "$leader"
killed=$(now_ms)
[ "$leader" = "$m1" ] && m1="" || m2=""
wait_for "the agent's report on the new leader" pods_reported
took=$(($(now_ms) - killed))
echo "report on the new leader $took ms after the kill"
# Lease 3 s + 2 jittered retries (up to 4.4 s) + start-up, then the agent's retry (at most 2 s).
[ "$took" -le 12000 ] || fail "reports resumed after $took ms"
# This report averages the samples of the whole run (ten seconds and more of them): within 10 %.
cpu_check "averaged report" 90 110

run curl -sf "http://$(cat "$TMP/agent.ready")/metrics"
expect_out "koord_agent_reports_total" "agent /metrics"
grep -q '^koord_agent_qos_actions_total{strategy="cpu_suppress",action="writes"} [1-9]' "$TMP/out" ||
    fail "agent /metrics: no cpu_suppress writes counted"
grep -q '^koord_agent_collect_rounds_total [1-9]' "$TMP/out" || fail "no collection rounds counted"
# A round may meet a file the writer is rewriting (a lost sample); most rounds see both pods.
both_sampled() { curl -sf "http://$(cat "$TMP/agent.ready")/metrics" | grep -q '^koord_agent_collect_pods 2$'; }
wait_for "a round sampling both pods" both_sampled
kill -TERM "$agent"
wait "$agent" || fail "agent exit status $?"
agent=""
finish
