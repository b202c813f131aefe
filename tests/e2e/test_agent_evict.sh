#!/bin/bash
# koord agent evictions end to end (reference koordlet-and-scheduler.md 3.2, 3.3 and 4): koord
# apiserver, koord manager (which renders the NodeSLO from slo-controller-config), and the agent
# of node-a on a prepared host tree (cgroup v1, cgroupfs, /proc) with the gates BEMemoryEvict and
# BECPUEvict on. Pods are created with kubectl; the agent evicts through pods/eviction with its
# node's token and records an Event on each pod.
#
# BE memory eviction: the node's memory (fake /proc/meminfo) is raised over the threshold; the
# BE pods go in upstream's victim order until the release target is met, the 4 s cool-down
# holds off the next round (counted in the agent's /metrics: the agent ticks without evicting),
# then the next round takes the rest; pods not labelled BE, and BE pods whose eviction-policy
# annotation excludes BEMemoryEvict, stay although the node is still over the threshold.
#
# BE CPU eviction: the BE pods' cpuacct counters advance at known rates and the BestEffort
# group's CFS quota sets the BE real limit; no eviction while the satisfaction is above the lower
# percent (after the 20 s cool-down from the agent's start), then the quota is lowered and the
# pod with the highest usage/request ratio goes, and the 20 s cool-down holds off the next.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || skip "kubectl not installed"
command -v curl >/dev/null || skip "curl not installed"

start_node_apiserver
manager="" agent="" writer=""
cleanup() {
    kill -9 $pid $manager $agent $writer 2>/dev/null || true
    wait $pid $manager $agent $writer 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT

# 16 GiB of memory: the capacity the memory thresholds are percentages of.
k create -f - <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: node-a}
status:
  capacity: {cpu: "8", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 16Gi, pods: "110"}
EOF
expect_rc 0 "create node-a"
# Memory: evict from 70 % down to 60 %. BE CPU: evict when the satisfaction (real limit / BE
# requests) is at most 40 %, releasing up to 50 %, once BE usage is 30 % of the real limit,
# over a 3 s window.
k create -f - <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: slo-controller-config, namespace: koordinator-system}
data:
  resource-threshold-config: |
    {"clusterStrategy": {"enable": true,
      "memoryEvictThresholdPercent": 70, "memoryEvictLowerPercent": 60,
      "cpuEvictBESatisfactionLowerPercent": 40, "cpuEvictBESatisfactionUpperPercent": 50,
      "cpuEvictBEUsageThresholdPercent": 30, "cpuEvictTimeWindowSeconds": 3}}
EOF
expect_rc 0 "create slo-controller-config"

# The pods: name, QoS label, priority class, batch-cpu request (milli), eviction-policy
# annotation, memory usage (anon bytes, "-" = no cgroup, so no sample), cpu usage (milli).
#   be-free         BE  koord-free   256 MiB   lowest priority: the first BE victim
#   be-big/mid/small/tiny  BE koord-batch  2 GiB, 1.5 GiB, 512 MiB, 128 MiB
#   be-nosample-a/b BE  koord-batch  no sample: last, by name descending
#   cpu-a/b/c       BE  koord-batch  batch-cpu 2000/1000/1000, policy ["BECPUEvict"] (never a
#                   memory victim, cpu-a the largest memory user of all BE pods)
#   ls-web          LS  koord-prod   Burstable (requests), 4 GiB
#   batch-nolabel   --  koord-batch  BestEffort in kube's terms but not labelled BE: never a
#                   victim of the BE evictors (no fallback from the kube QoS class)
pods="
be-free:BE:koord-free:0:-:268435456:0
be-big:BE:koord-batch:0:-:2147483648:0
be-mid:BE:koord-batch:0:-:1610612736:0
be-small:BE:koord-batch:0:-:536870912:0
be-tiny:BE:koord-batch:0:-:134217728:0
be-nosample-a:BE:koord-batch:0:-:-:0
be-nosample-b:BE:koord-batch:0:-:-:0
cpu-a:BE:koord-batch:2000:BECPUEvict:3221225472:500
cpu-b:BE:koord-batch:1000:BECPUEvict:67108864:400
cpu-c:BE:koord-batch:1000:BECPUEvict:67108864:50
ls-web:LS:koord-prod:0:-:4294967296:0
batch-nolabel:-:koord-batch:0:-:1073741824:0
"
for p in $pods; do
    IFS=: read -r name qos prio batch policy _ _ <<<"$p"
    labels='{}' ann='{}' res='{}'
    [ "$qos" != - ] && labels="{koordinator.sh/qosClass: $qos}"
    [ "$policy" != - ] && ann="{koordinator.sh/eviction-policy: '[\"$policy\"]'}"
    [ "$batch" != 0 ] && res="{requests: {kubernetes.io/batch-cpu: \"$batch\"}, limits: {kubernetes.io/batch-cpu: \"$batch\"}}"
    [ "$name" = ls-web ] && res='{requests: {cpu: "1", memory: 4Gi}}'
    # terminationGracePeriodSeconds 0: an evicted pod goes at once, as if a kubelet had
    # stopped it on the spot. With a grace period it would stay Terminating (koord apiserver
    # evicts gracefully) and, its cgroups still being there, count as "already being
    # released" in the agent's next rounds.
    k create -f - <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: default, labels: $labels, annotations: $ann}
spec:
  nodeName: node-a
  terminationGracePeriodSeconds: 0
  priorityClassName: $prio
  containers: [{name: c, image: busybox, resources: $res}]
EOF
    expect_rc 0 "create pod $name"
done
[ "$fails" -eq 0 ] || finish

# The host tree. Counters the agent keeps open are rewritten in place at a fixed width (no
# truncation, so a read never meets an empty file).
host="$TMP/host"
cg="$host/cgroup"
be="kubepods/besteffort"
mkdir -p "$host/proc" "$host/sys"
put() { printf '%19d\n' "$2" 1<>"$1"; }
memstat() {
    printf 'cache 0\nrss %s\nrss_huge 0\nshmem 0\nmapped_file 0\ntotal_cache 0\ntotal_rss %s\n' "$1" "$1"
    printf 'total_inactive_anon %s\ntotal_active_anon 0\ntotal_inactive_file 0\n' "$1"
    printf 'total_active_file 0\ntotal_unevictable 0\n'
}
declare -A cpu_dir cpu_rate
for p in $pods; do
    IFS=: read -r name _ _ _ _ mem rate <<<"$p"
    [ "$mem" = - ] && continue
    u=$(kubectl get pod "$name" -o jsonpath='{.metadata.uid}')
    q=$be
    [ "$name" = ls-web ] && q=kubepods/burstable
    for sub in cpuacct memory cpu cpuset; do mkdir -p "$cg/$sub/$q/pod$u"; done
    memstat "$mem" >"$cg/memory/$q/pod$u/memory.stat"
    printf 'nr_periods 0\nnr_throttled 0\nthrottled_time 0\n' >"$cg/cpu/$q/pod$u/cpu.stat"
    put "$cg/cpuacct/$q/pod$u/cpuacct.usage" 0
    [ "$rate" = 0 ] || cpu_rate[$name]=$rate cpu_dir[$name]="$cg/cpuacct/$q/pod$u"
done
echo 0-7 >"$cg/cpuset/$be/cpuset.cpus"
# BE real limit = min(8 CPUs, quota/period): 180000/100000 = 1800m to begin with.
put "$cg/cpu/$be/cpu.cfs_quota_us" 180000
put "$cg/cpu/$be/cpu.cfs_period_us" 100000
put "$cg/cpuacct/$be/cpuacct.usage" 0
printf 'cpu  1000 0 1000 100000 0 0 0 0 0 0\ncpu0 1000 0 1000 100000 0 0 0 0 0 0\n' >"$host/proc/stat"
# MemTotal 16 GiB; used (MemTotal - MemAvailable) 8 GiB = 50 %: under the threshold.
meminfo() { printf 'MemTotal:       16777216 kB\nMemFree:        %8d kB\nMemAvailable:   %8d kB\n' "$1" "$1" 1<>"$host/proc/meminfo"; }
meminfo 8388608
# The BE pods' CPU as functions of the clock (microseconds since t0, so ns = us x milli-cores):
# cpu-a 500m, cpu-b 400m, cpu-c 50m, and the BestEffort group their sum, 950m. All are written
# with the same clock reading, so a late write changes no ratio between them.
t0=${EPOCHREALTIME/./}
advance() {
    local el=$((${EPOCHREALTIME/./} - t0)) n sum=0
    for n in "${!cpu_rate[@]}"; do
        put "${cpu_dir[$n]}/cpuacct.usage" $((el * cpu_rate[$n]))
        sum=$((sum + cpu_rate[$n]))
    done
    put "$cg/cpuacct/$be/cpuacct.usage" $((el * sum))
}
advance
(while :; do advance; sleep 0.05; done) &
writer=$!

"$KOORD" manager --kubeconfig "$KUBECONFIG" --listen 127.0.0.1:0 --webhook-listen 127.0.0.1:0 --ready-file "$TMP/m.ready" \
    --cert-dir "$TMP/certs" --register-apiservice 127.0.0.1:0 \
    --leader-election-lease-duration 3 --leader-election-renew-deadline 2 \
    --leader-election-retry-period 1 >>"$TMP/manager.log" 2>&1 &
manager=$!
wait_for "manager listening" test -s "$TMP/m.ready"
slo_rendered() {
    [ "$(kubectl get nodeslo node-a -o jsonpath='{.spec.resourceUsedThresholdWithBE.memoryEvictLowerPercent} {.spec.resourceUsedThresholdWithBE.cpuEvictTimeWindowSeconds}')" = "60 3" ]
}
wait_for "the NodeSLO of node-a with the eviction thresholds" slo_rendered
wait_for "APIService Available" nodemetrics_available

token_kubeconfig "$TMP/kubeconfig-a" tok-a
# BE CPU suppression off: it would rewrite the BestEffort quota and cpuset, the real limit under
# test here.
"$KOORD" agent --node-name node-a --kubeconfig "$TMP/kubeconfig-a" --manager-address "https://$server" \
    --cgroup-root "$cg" --proc-root "$host/proc" --sys-root "$host/sys" --cgroup-version v1 \
    --cgroup-driver cgroupfs --resctrl-root "$host/sys/fs/resctrl" \
    --feature-gates BEMemoryEvict=true,BECPUEvict=true,BECPUSuppress=false \
    --listen 127.0.0.1:0 --ready-file "$TMP/agent.ready" >>"$TMP/agent.log" 2>&1 &
agent=$!
wait_for "agent running" test -s "$TMP/agent.ready"
metrics_url="http://$(cat "$TMP/agent.ready")/metrics"

# snap: one /metrics read into $ticks, $mem_ev, $cpu_ev, $sampled (the runner's counters come
# from one snapshot taken under its lock, so ticks and evictions agree).
snap() {
    curl -sf "$metrics_url" >"$TMP/metrics" || return 1
    local ev='koord_agent_qos_actions_total{strategy="%s",action="evictions"}'
    # shellcheck disable=SC2059
    read -r ticks mem_ev cpu_ev sampled < <(awk -v m="$(printf "$ev" memory_evict)" \
        -v c="$(printf "$ev" cpu_evict)" '
        $1 == "koord_agent_qos_ticks_total" { t = $2 } $1 == m { me = $2 } $1 == c { ce = $2 }
        $1 == "koord_agent_collect_pods" { s = $2 }
        END { print t, me, ce, s }' "$TMP/metrics")
    [ -n "$sampled" ]
}
# no_round_until T VAR N DESC: polls /metrics until the agent has run tick T, failing (with
# DESC) if the eviction counter $VAR leaves N on the way.
no_round_until() {
    for _ in $(seq 1 300); do
        snap || break
        [ "${!2}" = "$3" ] || { fail "$4: $2 ${!2} at tick $ticks, want $3 through tick $1"; return; }
        [ "$ticks" -ge "$1" ] && return
        sleep 0.05
    done
    fail "$4: the agent did not reach tick $1 (at $ticks)"
}
# Every pod with a cgroup sampled (10): the victims' order depends on their usage samples.
all_sampled() { snap && [ "$sampled" = 10 ]; }
wait_for "a collection round sampling the 10 pods with cgroups" all_sampled
[ "$mem_ev" = 0 ] && [ "$cpu_ev" = 0 ] || fail "evictions at 50 % memory: memory $mem_ev, cpu $cpu_ev"

# ---- BE memory eviction ----
# 14080 MiB used of 16384 MiB: usedPct = int(85.9) = 85 >= 70; release = 16 GiB x (85 - 60)
# / 100 = 4 GiB. Victims: be-free first (priority 3000 < 5000), then by usage descending:
# be-free 256 MiB (256), be-big 2 GiB (2304), be-mid 1.5 GiB (3840), be-small 512 MiB (4352
# >= 4096): four pods. (By usage alone it would be be-big, be-mid, be-small: 4096 - and be-free
# would stay.)
meminfo $((16777216 - 14080 * 1024))
# before: the last tick seen without the round, so the round ran at a tick in (before, $ticks].
ev_at_least() { snap && { [ "$mem_ev" -ge "$1" ] || { before=$ticks && false; }; }; }
before=$ticks
wait_for "the first memory eviction round" ev_at_least 1
round1=$ticks
[ "$mem_ev" = 4 ] || fail "first memory round evicted $mem_ev pods, want 4"
names() { kubectl get pods -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\n' | sort | tr '\n' ' '; }
after1=$(names)
snap
if [ "$mem_ev" = 4 ]; then # no second round yet: the listing is the first round's result
    want="batch-nolabel be-nosample-a be-nosample-b be-tiny cpu-a cpu-b cpu-c ls-web "
    [ "$after1" = "$want" ] || fail "pods after the first round: '$after1', want '$want'"
fi
# Still 85 % used, be-tiny and the two without samples left: only the 4 s cool-down holds off a
# second round. The round ran at tick before+1 or later; the two ticks after it (well within
# 4 s: ticks are 1 s apart) evict nothing.
no_round_until $((before + 3)) mem_ev 4 "memory cool-down"
# The second round, after the cool-down: release still 4 GiB; be-tiny 128 MiB, then the pods
# without a sample, be-nosample-b before be-nosample-a: all three, the target still unmet.
wait_for "the second memory eviction round" ev_at_least 5
[ "$mem_ev" = 7 ] || fail "second memory round: $mem_ev evictions in all, want 7"
echo "memory eviction rounds seen at ticks $round1 and $ticks"

# ---- BE CPU eviction ----
# BE requests 4000m (cpu-a 2000 + cpu-b 1000 + cpu-c 1000), real limit 1800m (quota): the
# satisfaction 45 % is above the lower 40 %, BE usage 950m is over 30 % of the limit. By tick 23
# the agent has run more than 20 s (ticks are at least 1 s apart, the first at its start), so the
# start-up cool-down is over and ticks have evaluated BECPUEvict: nothing evicted.
ticks_at_least() { snap && [ "$ticks" -ge "$1" ]; }
wait_for "23 agent ticks" ticks_at_least 23
[ "$cpu_ev" = 0 ] || fail "cpu evictions $cpu_ev at satisfaction 45 %"
# Quota 100000: real limit 1000m, satisfaction 25 % <= 40 %; release = 4000 x (0.50 - 0.25) =
# 1000m of batch-cpu. Victims (all priority 5000) by usage/request descending: cpu-b 400/1000 =
# 0.4, cpu-a 500/2000 = 0.25, cpu-c 50/1000 = 0.05; cpu-b's 1000m meets the target: only cpu-b
# (cpu-a, the largest user, stays).
put "$cg/cpu/$be/cpu.cfs_quota_us" 100000
cpu_at_least() { snap && { [ "$cpu_ev" -ge "$1" ] || { before=$ticks && false; }; }; }
before=$ticks
wait_for "a BE CPU eviction" cpu_at_least 1
[ "$cpu_ev" = 1 ] || fail "cpu evictions $cpu_ev, want 1"
echo "BE CPU eviction seen at tick $ticks"
# Requests now 3000m: satisfaction 33 %, release 500m; only the 20 s cool-down holds cpu-a.
no_round_until $((before + 3)) cpu_ev 1 "cpu cool-down"
# Still 85 % memory used all along: no memory victims left, and none taken beyond the BE ones.
[ "$mem_ev" = 7 ] || fail "memory evictions $mem_ev, want 7"

# ---- what happened, from the API and the agent's log ----
left=$(names)
want="batch-nolabel cpu-a cpu-c ls-web "
[ "$left" = "$want" ] || fail "pods left: '$left', want '$want'"
# (log lines: msg="evicted pod \"default/NAME\" for FEATURE", in the order of the evictions)
order=$(sed -n 's/.*msg="evicted pod \\"default\/\([a-z-]*\)\\" for \([A-Za-z]*\)".*/\1:\2/p' \
    "$TMP/agent.log" | tr '\n' ' ')
want="be-free:BEMemoryEvict be-big:BEMemoryEvict be-mid:BEMemoryEvict be-small:BEMemoryEvict "
want+="be-tiny:BEMemoryEvict be-nosample-b:BEMemoryEvict be-nosample-a:BEMemoryEvict "
want+="cpu-b:BECPUEvict "
[ "$order" = "$want" ] || fail "eviction order '$order', want '$want'"
k get events -n default -o jsonpath='{range .items[*]}{.involvedObject.name} {.reason} {.type} {.source.component} {.count}{"\n"}{end}'
expect_rc 0 "get events"
sort "$TMP/out" >"$TMP/events"
cat >"$TMP/events.want" <<'EOF'
be-big evictPodSuccess Warning koordlet-qosManager 1
be-free evictPodSuccess Warning koordlet-qosManager 1
be-mid evictPodSuccess Warning koordlet-qosManager 1
be-nosample-a evictPodSuccess Warning koordlet-qosManager 1
be-nosample-b evictPodSuccess Warning koordlet-qosManager 1
be-small evictPodSuccess Warning koordlet-qosManager 1
be-tiny evictPodSuccess Warning koordlet-qosManager 1
cpu-b evictPodSuccess Warning koordlet-qosManager 1
EOF
diff "$TMP/events.want" "$TMP/events" >&2 || fail "events differ (- want, + got)"
k get events -n default -o jsonpath='{.items[?(@.involvedObject.name=="cpu-b")].message}'
expect_out "evict Pod:default/cpu-b, reason: evicted, message: trigger by koordlet feature BECPUEvict, kill pod: cpu-b" "cpu-b event message"
k get events -n default -o jsonpath='{.items[?(@.involvedObject.name=="be-big")].message}'
expect_out "evict Pod:default/be-big, reason: evicted, message: trigger by koordlet feature BEMemoryEvict, kill pod: be-big" "be-big event message"
grep -q '^koord_agent_qos_actions_total{strategy="memory_evict",action="errors"} 0$' "$TMP/metrics" ||
    fail "memory eviction errors: $(grep memory_evict "$TMP/metrics")"
grep -q '^koord_agent_qos_actions_total{strategy="cpu_evict",action="errors"} 0$' "$TMP/metrics" ||
    fail "cpu eviction errors: $(grep cpu_evict "$TMP/metrics")"

kill -TERM "$agent"
wait "$agent" || fail "agent exit status $?"
agent=""
finish
