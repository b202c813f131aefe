#!/bin/bash
# koord agent on the running kernel's cgroup v1 hierarchy: koord apiserver, koord manager and the
# agent, whose cgroup root is a temporary directory of symlinks <root>/<subsys> ->
# /sys/fs/cgroup/<subsys>/koord-e2e-<pid>, a group of our own in cpu, cpuacct, cpuset and memory.
# Under it the kubepods tree of two pods (cgroupfs driver): kubepods/besteffort/pod<uid>/<ctr>
# holds a busy loop (one CPU) and a process with 64 MiB of anon memory; kubepods/burstable/
# pod<uid>/<ctr> an idle process. /proc and /sys are the real ones; the resctrl root is an empty
# temporary path (the real one is the host's).
#  - kubectl get nodemetrics: the BE pod's CPU is what the busy loop uses (real kernel
#    counters: between 500m and 1100m), its memory the anon memory it holds (64 to 80 MiB);
#  - BE CPU suppression (cfsQuota policy) writes the BestEffort group's cpu.cfs_quota_us, the
#    kernel reads it back and throttles the loop; turned off, the quota goes back to -1.
# Only groups under koord-e2e-<pid> are created or written; teardown kills the processes and
# removes every group it made on every exit path. Skipped (exit 77) when not root, when
# /sys/fs/cgroup is not cgroup v1, or when the groups cannot be created.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || skip "kubectl not installed"
command -v curl >/dev/null || skip "curl not installed"
command -v perl >/dev/null || skip "perl not installed"
[ "$(id -u)" = 0 ] || skip "not root"
subsystems="cpu cpuacct cpuset memory"
for sub in $subsystems; do
    [ "$(stat -f -c %T "/sys/fs/cgroup/$sub" 2>/dev/null)" = cgroupfs ] ||
        skip "/sys/fs/cgroup/$sub is not a cgroup v1 hierarchy"
done

NM=nodemetrics.metrics.koordinator.sh
name="koord-e2e-$$"
start_node_apiserver
manager="" agent="" procs="" made=""
# Removes the groups made, deepest first; a group whose last task is still exiting is busy for
# a moment.
remove_groups() {
    local sub d
    for sub in $made; do
        find "/sys/fs/cgroup/$sub/$name" -depth -type d 2>/dev/null | while read -r d; do
            for _ in $(seq 1 100); do
                rmdir "$d" 2>/dev/null || [ ! -d "$d" ] && break
                sleep 0.05
            done
            if [ -d "$d" ]; then echo "cannot remove $d" >&2; fi
        done
    done
}
cleanup() {
    set +e # all of it, whatever fails
    kill -9 $pid $manager $agent $procs 2>/dev/null
    wait $pid $manager $agent $procs 2>/dev/null # reaped: the groups are empty
    remove_groups
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# 2 CPUs whatever the machine has: the BE suppression below is a fraction of the capacity, and
# must come out under the one CPU the busy loop wants.
mem_kib=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
k create -f - <<EOF
apiVersion: v1
kind: Node
metadata: {name: node-a}
status:
  capacity: {cpu: "2", memory: ${mem_kib}Ki, pods: "110"}
  allocatable: {cpu: "2", memory: ${mem_kib}Ki, pods: "110"}
EOF
expect_rc 0 "create node-a"
k create -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: be-hog, namespace: default, labels: {koordinator.sh/qosClass: BE}}
spec:
  nodeName: node-a
  priorityClassName: koord-batch
  containers: [{name: c, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: ls-idle, namespace: default, labels: {koordinator.sh/qosClass: LS}}
spec:
  nodeName: node-a
  priorityClassName: koord-prod
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m, memory: 64Mi}}}]
EOF
expect_rc 0 "create pods"
[ "$fails" -eq 0 ] || finish

# The groups. cpuset: a new group has no CPUs or memory nodes until given its parent's.
mkgroup() { # mkgroup REL: the group REL (under ours) in every subsystem
    local sub g
    for sub in $subsystems; do
        g="/sys/fs/cgroup/$sub/$name${1:+/$1}"
        [ -d "$g" ] && continue # cpu and cpuacct may be one hierarchy
        mkdir "$g" 2>/dev/null || return 1
        if [ "$sub" = cpuset ]; then
            cat "$(dirname "$g")/cpuset.cpus" >"$g/cpuset.cpus" || return 1
            cat "$(dirname "$g")/cpuset.mems" >"$g/cpuset.mems" || return 1
        fi
    done
}
for sub in $subsystems; do
    mkdir "/sys/fs/cgroup/$sub/$name" 2>/dev/null || [ -d "/sys/fs/cgroup/$sub/$name" ] ||
        skip "cannot create /sys/fs/cgroup/$sub/$name (read-only cgroup mounts?)"
    made+=" $sub"
done
for f in cpuset.cpus cpuset.mems; do cat "/sys/fs/cgroup/cpuset/$f" >"/sys/fs/cgroup/cpuset/$name/$f"; done
# Our group's weight against the rest of the machine (a shared, loaded one): ten ordinary
# processes' worth, so that the busy loop has most of one CPU.
echo 10240 >"/sys/fs/cgroup/cpu/$name/cpu.shares"
uid() { kubectl get pod "$1" -o jsonpath='{.metadata.uid}'; }
be_pod="kubepods/besteffort/pod$(uid be-hog)"
ls_pod="kubepods/burstable/pod$(uid ls-idle)"
be_ctr=$(echo "be-hog $$" | sha256sum | cut -c1-64)
ls_ctr=$(echo "ls-idle $$" | sha256sum | cut -c1-64)
for g in kubepods kubepods/besteffort kubepods/burstable "$be_pod" "$be_pod/$be_ctr" "$ls_pod" \
    "$ls_pod/$ls_ctr"; do
    mkgroup "$g" || fail "cannot create group $g"
done
[ "$fails" -eq 0 ] || finish
# The pods' containers, as the kubelet would report them.
for p in "be-hog:$be_ctr" "ls-idle:$ls_ctr"; do
    k patch pod "${p%%:*}" --subresource=status --type=merge -p "{\"status\": {\"phase\": \"Running\",
        \"containerStatuses\": [{\"name\": \"c\", \"containerID\": \"containerd://${p#*:}\",
        \"ready\": true, \"restartCount\": 0, \"image\": \"busybox\", \"imageID\": \"\"}]}}"
    expect_rc 0 "container status of ${p%%:*}"
done

# in_group REL CMD...: runs CMD in group REL of every subsystem (moved there before it starts,
# so that all it allocates is charged there), in the background; its pid is added to $procs.
# Each ends by itself after 90 s, should this script be killed without its traps.
in_group() {
    local rel=$1 files="" sub
    shift
    for sub in $subsystems; do files+=" /sys/fs/cgroup/$sub/$name/$rel/tasks"; done
    # shellcheck disable=SC2016 # expanded by the child shell
    sh -c 'for f in $1; do echo $$ >"$f" || exit 1; done; shift; exec "$@"' sh "$files" "$@" &
    procs+=" $!"
}
in_group "$be_pod/$be_ctr" bash -c 'while ((SECONDS < 90)); do :; done'
# 64 MiB appended in 1 MiB pieces (a single 64 MiB string would be built twice).
in_group "$be_pod/$be_ctr" perl -e '$| = 1; my $x; $x .= "a" x 1048576 for 1 .. 64; print "ready\n"; sleep 90' >"$TMP/holder.out"
in_group "$ls_pod/$ls_ctr" sleep 90
wait_for "the 64 MiB holder ready" grep -q ready "$TMP/holder.out"
cgroup_file() { cat "/sys/fs/cgroup/$1/$name/$2"; }
[ "$(cgroup_file cpu kubepods/besteffort/cpu.cfs_quota_us)" = -1 ] || fail "BestEffort quota is not -1 at the start"

"$KOORD" manager --kubeconfig "$KUBECONFIG" --listen 127.0.0.1:0 --webhook-listen 127.0.0.1:0 --ready-file "$TMP/m.ready" \
    --cert-dir "$TMP/certs" --register-apiservice 127.0.0.1:0 \
    --leader-election-lease-duration 3 --leader-election-renew-deadline 2 \
    --leader-election-retry-period 1 >>"$TMP/manager.log" 2>&1 &
manager=$!
wait_for "manager listening" test -s "$TMP/m.ready"
wait_for "APIService Available" nodemetrics_available
wait_for "NodeSLO of node-a" kubectl get nodeslo node-a

token_kubeconfig "$TMP/kubeconfig-a" tok-a
# The root is a directory of symlinks: version and driver cannot be detected from it.
root="$TMP/cgroot"
mkdir "$root"
for sub in $subsystems; do ln -s "/sys/fs/cgroup/$sub/$name" "$root/$sub"; done
"$KOORD" agent --node-name node-a --kubeconfig "$TMP/kubeconfig-a" --manager-address "https://$server" \
    --cgroup-root "$root" --cgroup-version v1 --cgroup-driver cgroupfs --resctrl-root "$TMP/resctrl" \
    --listen 127.0.0.1:0 --ready-file "$TMP/agent.ready" >>"$TMP/agent.log" 2>&1 &
agent=$!
wait_for "agent running" test -s "$TMP/agent.ready"

# milli Q: a CPU quantity in milli-cores; bytes Q: a memory quantity in bytes.
# (-1 when it is neither)
milli() { case $1 in [0-9]*m) echo "${1%m}" ;; [0-9]*) echo $(($1 * 1000)) ;; *) echo -1 ;; esac; }
bytes() {
    case $1 in
    [0-9]*Ki) echo $((${1%Ki} << 10)) ;; [0-9]*Mi) echo $((${1%Mi} << 20)) ;;
    [0-9]*Gi) echo $((${1%Gi} << 30)) ;; [0-9]*) echo "$1" ;; *) echo -1 ;;
    esac
}
nm() { kubectl get $NM node-a -o jsonpath="$1"; }
pods_reported() { [ "$(nm '{.status.podsMetric[*].name}' | tr ' ' '\n' | sort | tr '\n' ' ')" = "be-hog ls-idle " ]; }
wait_for "a report with both pods" pods_reported
pod_usage() { nm "{.status.podsMetric[?(@.name==\"$1\")].podUsage.resources.$2}"; }
be_cpu=$(pod_usage be-hog cpu)
be_mem=$(pod_usage be-hog memory)
ls_cpu=$(pod_usage ls-idle cpu)
node_cpu=$(nm '{.status.nodeMetric.nodeUsage.resources.cpu}')
echo "NodeMetric: be-hog cpu $be_cpu memory $be_mem, ls-idle cpu $ls_cpu, node cpu $node_cpu"
v=$(milli "$be_cpu")
[ "$v" -ge 500 ] && [ "$v" -le 1100 ] || fail "be-hog cpu $be_cpu, want the busy loop's 500m..1100m"
v=$(bytes "$be_mem")
[ "$v" -ge $((64 << 20)) ] && [ "$v" -le $((80 << 20)) ] || fail "be-hog memory $be_mem, want 64..80 MiB"
v=$(milli "$ls_cpu")
[ "$v" -le 100 ] || fail "ls-idle cpu $ls_cpu, want about 0"
v=$(milli "$node_cpu")
[ "$v" -ge 500 ] || fail "node cpu $node_cpu, want at least the busy loop's"

# BE suppression, cfsQuota policy: threshold 10 % of the capacity minus the non-BE pods and the
# system is at most 10 %, so the minimum 25 % decides whatever the machine does:
# 2000m x 25 % = 500m, a quota of 50000 us per 100000 us period.
k create -f - <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: slo-controller-config, namespace: koordinator-system}
data:
  resource-threshold-config: |
    {"clusterStrategy": {"enable": true, "cpuSuppressPolicy": "cfsQuota",
      "cpuSuppressThresholdPercent": 10, "cpuSuppressMinPercent": 25}}
EOF
expect_rc 0 "enable BE suppression"
quota_is() { [ "$(cgroup_file cpu kubepods/besteffort/cpu.cfs_quota_us)" = "$1" ]; }
wait_for "the kernel's BestEffort quota at 50000" quota_is 50000
# The kernel enforces it: the busy loop wants a whole CPU and gets half of one.
throttled() { [ "$(awk '$1 == "nr_throttled" { print $2 }' "/sys/fs/cgroup/cpu/$name/kubepods/besteffort/cpu.stat")" -gt 0 ]; }
wait_for "the BestEffort group throttled by the kernel" throttled
# Off again: the agent puts the quota back to unlimited.
k patch configmap slo-controller-config -n koordinator-system --type=merge \
    -p '{"data": {"resource-threshold-config": "{\"clusterStrategy\": {\"enable\": false}}"}}'
expect_rc 0 "disable BE suppression"
wait_for "the kernel's BestEffort quota back at -1" quota_is -1

run curl -sf "http://$(cat "$TMP/agent.ready")/metrics"
expect_rc 0 "agent /metrics"
suppress() { awk -v k="koord_agent_qos_actions_total{strategy=\"cpu_suppress\",action=\"$1\"}" '$1 == k { print $2 }' "$TMP/out"; }
[ "$(suppress writes)" -ge 2 ] || fail "agent /metrics: the two quota writes not counted: $(grep cpu_suppress "$TMP/out")"
[ "$(suppress errors)" = 0 ] || fail "agent /metrics: cpu_suppress errors: $(grep cpu_suppress "$TMP/out")"
# The containers' groups, found from the pods' container statuses, are sampled too.
expect_out "koord_agent_collect_containers 2" "agent /metrics: both containers sampled"
kill -TERM "$agent"
wait "$agent" || fail "agent exit status $?"
agent=""
finish
