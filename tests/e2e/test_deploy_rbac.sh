#!/bin/bash
# The least-privilege RBAC of deploy/rbac (issue 18 §4): koord apiserver with
# --authorization-mode=Node,RBAC, the manifests applied as an installer applies them, and each
# component run with nothing but a `kubectl create token` of its own ServiceAccount. Each must
# do its whole job under those rules, and be refused (403) a listed set of requests beyond them:
#
#  - koord manager: leads on its Lease, renders the NodeSLO from slo-controller-config, keeps
#    one slo.koordinator.sh NodeMetric per Node (created, deleted with the Node), writes
#    the batch resources on the Node status from a NodeMetric report (whose client certificate it
#    checks against the CA it reads from kube-system/extension-apiserver-authentication),
#    keeps the caBundle of the two webhook configurations of deploy/webhooks.yaml, shares its
#    CAs through the Secret of --cert-secret, and makes an ElasticQuotaProfile's root
#    ElasticQuota;
#  - koord scheduler: leads on its Lease, binds a pod and records the Scheduled Event, preempts
#    the pod no PodDisruptionBudget protects and records Preempted;
#  - the manager's /ui dashboard: a SubjectAccessReview lets the koord-dashboard ServiceAccount
#    (deploy/rbac/dashboard.yaml) in, keeps another out, and shows the agent's eviction Event;
#  - koord agent (koordlet), with the token the kubelet mounts for its DaemonSet pod (bound to
#    a pod on agent-node): reads its Node, pods and NodeSLO, evicts a BE pod under memory
#    pressure through pods/eviction and records the Event, and reports its usage straight to
#    the manager's NodeMetric API, which takes the token's node-name extra as the node's
#    identity; the same token may not report for another node, the plain ServiceAccount token
#    for none (403), and once the pod is deleted the token no longer authenticates. A second
#    agent in --report-mode crd (upstream koordlet's way) reports into the slo.koordinator.sh
#    NodeMetric the manager created.
#
# Waits poll with deadlines.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || skip "kubectl not installed"
command -v curl >/dev/null || skip "curl not installed"

D=$KOORD_SOURCE_DIR/deploy
NS=koordinator-system
start_apiserver "$TMP/data" --authorization-mode=Node,RBAC
manager="" sched="" agent="" agent2=""
cleanup() {
    kill -9 $pid $manager $sched $agent $agent2 2>/dev/null || true
    wait $pid $manager $sched $agent $agent2 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT

# What an installer applies, as cluster-admin (the admin certificate: system:masters). The
# webhook configurations are applied for the manager to keep their caBundle; nothing serves
# them at their Service here, so they are removed again once that is checked.
k apply -f "$D/namespace.yaml" -f "$D/crds/" -f "$D/priorityclasses.yaml" \
    -f "$D/slo-controller-config.yaml" -f "$D/rbac/"
expect_rc 0 "apply namespace, CRDs, priority classes, slo-controller-config, rbac"
k apply -f "$D/webhooks.yaml"
expect_rc 0 "apply webhook configurations"
[ "$fails" -eq 0 ] || finish

# One token and one kubeconfig per ServiceAccount, nothing else.
for sa in koord-manager koord-scheduler koordlet; do
    k -n $NS create token $sa --duration 2h
    expect_rc 0 "create token $sa"
    cp "$TMP/out" "$TMP/token-$sa"
    token_kubeconfig "$TMP/kc-$sa" "$(cat "$TMP/token-$sa")"
    k --kubeconfig "$TMP/kc-$sa" auth whoami -o jsonpath='{.status.userInfo.username}'
    expect_rc 0 "whoami $sa"
    expect_out "system:serviceaccount:$NS:$sa" "whoami $sa"
done
[ "$fails" -eq 0 ] || finish
# as SA ARGS...: kubectl as that ServiceAccount, as a user types it.
as() {
    local sa=$1
    shift
    k --kubeconfig "$TMP/kc-$sa" "$@"
}

# Two nodes: plain-node (32 cores, 128Gi) for the manager's batch resources, agent-node (16Gi,
# the capacity the agent's memory thresholds are percentages of) for the agent.
k create -f "$KOORD_SOURCE_DIR/examples/nodes/node-plain.yaml"
expect_rc 0 "create plain-node"
k create -f - <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: agent-node, labels: {kubernetes.io/hostname: agent-node}}
status:
  capacity: {cpu: "8", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 16Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
EOF
expect_rc 0 "create agent-node"

# ---- koord manager ----
# deploy/manager.yaml's arguments (addresses and directories local), short lease timings.
"$KOORD" manager --kubeconfig "$TMP/kc-koord-manager" --enable-leader-election \
    --leader-election-namespace=$NS --config-namespace=$NS --listen 127.0.0.1:0 \
    --webhook-listen 127.0.0.1:0 --ready-file "$TMP/m.ready" --cert-dir "$TMP/m" \
    --cert-secret=koordinator-webhook-certs --feature-gates= --sync-period=0 \
    --leader-election-lease-duration 3 --leader-election-renew-deadline 2 \
    --leader-election-retry-period 1 >>"$TMP/manager.log" 2>&1 &
manager=$!
wait_for "manager listening" test -s "$TMP/m.ready"
maddr=$(cat "$TMP/m.ready")
mca="$TMP/m/koord-manager-ca.crt"
wait_for "manager ready (leading)" curl -sfk "https://$maddr/readyz"
k get lease -n $NS koordinator-manager -o jsonpath='{.spec.holderIdentity}'
[ -s "$TMP/out" ] || fail "the manager's Lease has no holder"
# --cert-secret: the shared CAs in the Secret, the NodeMetric API's CA published.
k get secret -n $NS koordinator-webhook-certs -o jsonpath='{.data}'
expect_rc 0 "Secret koordinator-webhook-certs"
[ -s "$TMP/out" ] || fail "Secret koordinator-webhook-certs is empty"
k get configmap -n $NS koord-manager-ca -o jsonpath='{.data.ca\.crt}'
expect_out "BEGIN CERTIFICATE" "ConfigMap koord-manager-ca"
nodeslo_from_config() {
    [ "$(kubectl get nodeslo agent-node -o jsonpath='{.spec.resourceUsedThresholdWithBE.enable}')" = true ]
}
wait_for "NodeSLO of agent-node from slo-controller-config" nodeslo_from_config
wait_for "NodeSLO of plain-node" kubectl get nodeslo plain-node
# --nodemetric-crd auto (the default), and the CRD is installed: the manager keeps one
# slo.koordinator.sh NodeMetric per Node for agents in crd mode (upstream's koordlet), its spec
# the collect policy of deploy's colocation-config, and deletes it with its Node.
crd_spec() {
    [ "$(kubectl get nodemetrics.slo.koordinator.sh "$1" \
        -o jsonpath='{.spec.metricCollectPolicy.aggregateDurationSeconds}/{.spec.metricCollectPolicy.reportIntervalSeconds}')" = 300/60 ]
}
wait_for "slo.koordinator.sh NodeMetric of agent-node" crd_spec agent-node
wait_for "slo.koordinator.sh NodeMetric of plain-node" crd_spec plain-node
k create -f - <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: gone-node}
EOF
expect_rc 0 "create gone-node"
wait_for "slo.koordinator.sh NodeMetric of gone-node" crd_spec gone-node
k delete node gone-node
expect_rc 0 "delete gone-node"
crd_gone() { ! kubectl get nodemetrics.slo.koordinator.sh "$1" >/dev/null 2>&1; }
wait_for "the NodeMetric of gone-node deleted with it" crd_gone gone-node
ca_bundle_set() {
    [ -n "$(kubectl get mutatingwebhookconfiguration koordinator-mutating-webhook-configuration \
        -o jsonpath='{.webhooks[0].clientConfig.caBundle}')" ] &&
        [ -n "$(kubectl get validatingwebhookconfiguration koordinator-validating-webhook-configuration \
            -o jsonpath='{.webhooks[0].clientConfig.caBundle}')" ]
}
wait_for "caBundle of both webhook configurations" ca_bundle_set
k delete -f "$D/webhooks.yaml"
expect_rc 0 "delete webhook configurations"

# Batch resources (manager-behaviour.md 4.4, colocation on in deploy's slo-controller-config):
# 32 cores, 128Gi, reclaim 60/65, system usage 500m/1Gi, no pods: 32000 - 12800 - 500 = 18700.
# The report goes with the admin certificate, which the manager checks against the client CA
# it read from kube-system/extension-apiserver-authentication (no --client-ca-file).
cat >"$TMP/status.json" <<'EOF'
{"nodeMetric":{"nodeUsage":{"resources":{"cpu":"1500m","memory":"6Gi"}},
 "systemUsage":{"resources":{"cpu":"500m","memory":"1Gi"}}},"podsMetric":[]}
EOF
run "$KOORD" report --node plain-node -f "$TMP/status.json" --server "https://$maddr" \
    --certificate-authority "$mca"
expect_rc 0 "NodeMetric report for plain-node"
batch_cpu() {
    [ "$(kubectl get node plain-node -o jsonpath='{.status.allocatable.kubernetes\.io/batch-cpu}')" = 18700 ]
}
wait_for "batch-cpu 18700 on plain-node" batch_cpu
# An ElasticQuotaProfile: its root ElasticQuota created (min = 0.5 x agent-node's 8 CPUs) and
# the profile labelled with its tree id.
k create -f - <<'EOF'
apiVersion: quota.koordinator.sh/v1alpha1
kind: ElasticQuotaProfile
metadata: {name: pool, namespace: default}
spec:
  quotaName: pool-root
  resourceRatio: "0.5"
  nodeSelector: {matchLabels: {kubernetes.io/hostname: agent-node}}
EOF
expect_rc 0 "create ElasticQuotaProfile"
quota_min() { [ "$(kubectl get elasticquota pool-root -o jsonpath='{.spec.min.cpu}')" = 4 ]; }
wait_for "ElasticQuota pool-root with min cpu 4" quota_min
profile_tree() {
    [ -n "$(kubectl get elasticquotaprofile pool \
        -o jsonpath='{.metadata.labels.quota\.scheduling\.koordinator\.sh/tree-id}')" ]
}
wait_for "the profile's tree id" profile_tree

# ---- koord scheduler ----
# No APIService for the manager's NodeMetric API here: the scheduler's LoadAware reads the
# slo.koordinator.sh NodeMetrics, which the manager keeps, and (as upstream's, whose
# enableScheduleWhenNodeMetricsExpired is false by default) filters out a node whose NodeMetric
# has no fresh report. node_reports NODE...: each node's agent reports the node idle (written
# here by the admin, as upstream's koordlet would write it) once the manager made the object.
# Idle matters for the preemption below: LoadAware's filter counts a pod bound since the report
# at 85 % of its request, so a 2-CPU node with one 1500m pod is at 63.75 %, under the 65 %
# threshold, and stays a preemption candidate.
node_reports() {
    local n
    for n in "$@"; do
        wait_for "slo.koordinator.sh NodeMetric of $n" crd_spec "$n"
        k patch nodemetrics.slo.koordinator.sh "$n" --subresource status --type merge -p \
            "{\"status\":{\"updateTime\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\",\"nodeMetric\":{\"nodeUsage\":{\"resources\":{\"cpu\":\"0\",\"memory\":\"0\"}}}}}"
        expect_rc 0 "report of $n"
    done
}
node_reports plain-node agent-node
# deploy/scheduler.yaml's arguments (the address local).
"$KOORD" scheduler --kubeconfig "$TMP/kc-koord-scheduler" --leader-elect=true \
    --leader-elect-resource-namespace=$NS --authentication-skip-lookup=true --feature-gates= \
    --listen 127.0.0.1:0 --ready-file "$TMP/s.ready" >>"$TMP/scheduler.log" 2>&1 &
sched=$!
wait_for "scheduler listening" test -s "$TMP/s.ready"
sched_leads() { [ -n "$(kubectl get lease -n $NS koord-scheduler -o jsonpath='{.spec.holderIdentity}')" ]; }
wait_for "scheduler leads on its Lease" sched_leads
k create -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  schedulerName: koord-scheduler
  containers: [{name: c, image: pause, resources: {requests: {cpu: 100m, memory: 100Mi}}}]
EOF
expect_rc 0 "create pod web"
bound() { [ -n "$(kubectl get pod web -o jsonpath='{.spec.nodeName}')" ]; }
wait_for "pod web bound" bound
scheduled_event() {
    kubectl get events --field-selector involvedObject.name=web -o jsonpath='{.items[*].message}' |
        grep -q "Successfully assigned default/web to"
}
wait_for "the Scheduled Event of web" scheduled_event
# Preemption: two 2-CPU nodes, each full of a low-priority pod; low-a is protected by a PDB (no
# disruptions allowed). A high-priority pod that fits either node once its pod goes preempts
# low-b (the candidate without a PDB violation, which the scheduler sees only if it may list
# PDBs), records Preempted on it, and is bound there; low-a stays.
for n in sched-1 sched-2; do
    k create -f - <<EOF
apiVersion: v1
kind: Node
metadata: {name: $n, labels: {kubernetes.io/hostname: $n, pool: sched}}
status:
  capacity: {cpu: "2", memory: 4Gi, pods: "110"}
  allocatable: {cpu: "2", memory: 4Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
EOF
    expect_rc 0 "create node $n"
done
node_reports sched-1 sched-2
k create -f - <<'EOF'
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: low-a, namespace: default}
spec: {minAvailable: 1, selector: {matchLabels: {app: low-a}}}
EOF
expect_rc 0 "create PDB low-a"
# spod NAME NODESELECTOR [PRIORITYCLASS]: a pod of 1500m for koord-scheduler, koord-batch
# (5000) unless named.
spod() {
    k create -f - <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default, labels: {app: $1}}
spec:
  schedulerName: koord-scheduler
  priorityClassName: ${3:-koord-batch}
  terminationGracePeriodSeconds: 0
  nodeSelector: {$2}
  containers: [{name: c, image: pause, resources: {requests: {cpu: 1500m}}}]
EOF
    expect_rc 0 "create pod $1"
}
node_of() { kubectl get pod "$1" -o jsonpath='{.spec.nodeName}'; }
bound_to() { [ "$(node_of "$1")" = "$2" ]; }
# low-b first: without the PDB every other tie-breaker (kube's pickOneNodeForPreemption, down to
# the victims' latest start) would pick low-a, the newer pod.
spod low-b 'kubernetes.io/hostname: sched-2'
wait_for "low-b on sched-2" bound_to low-b sched-2
# creationTimestamp has whole seconds: low-a must be visibly newer.
later_second() {
    [[ "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$(kubectl get pod low-b -o jsonpath='{.metadata.creationTimestamp}')" ]]
}
wait_for "a second after low-b's creation" later_second
spod low-a 'kubernetes.io/hostname: sched-1'
wait_for "low-a on sched-1" bound_to low-a sched-1
spod high 'pool: sched' koord-prod
gone() { ! kubectl get pod "$1" >/dev/null 2>&1; }
wait_for "low-b preempted" gone low-b
wait_for "high bound to sched-2" bound_to high sched-2
k get pod low-a
expect_rc 0 "low-a (PDB) stays"
k get events --field-selector involvedObject.name=low-b,reason=Preempted -o jsonpath='{.items[*].message}'
expect_out "Preempted by pod" "Preempted Event on low-b"

# ---- koord agent ----
# The host tree (cgroup v1, cgroupfs): one BE pod with 1 GiB of memory and one LS pod; the
# node's memory 90 % used, over the default threshold (70 %): the BE pod goes.
k create -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: be-job, namespace: default, labels: {koordinator.sh/qosClass: BE}}
spec:
  nodeName: agent-node
  priorityClassName: koord-batch
  containers: [{name: c, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: ls-web, namespace: default, labels: {koordinator.sh/qosClass: LS}}
spec:
  nodeName: agent-node
  priorityClassName: koord-prod
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1", memory: 1Gi}}}]
EOF
expect_rc 0 "create pods be-job, ls-web"
host="$TMP/host"
cg="$host/cgroup"
mkdir -p "$host/proc" "$host/sys"
for p in be-job:kubepods/besteffort ls-web:kubepods/burstable; do
    IFS=: read -r name q <<<"$p"
    u=$(kubectl get pod "$name" -o jsonpath='{.metadata.uid}')
    for sub in cpuacct memory cpu cpuset; do mkdir -p "$cg/$sub/$q/pod$u"; done
    printf 'cache 0\nrss 1073741824\ntotal_cache 0\ntotal_rss 1073741824\ntotal_inactive_anon 1073741824\ntotal_active_anon 0\ntotal_inactive_file 0\ntotal_active_file 0\n' \
        >"$cg/memory/$q/pod$u/memory.stat"
    printf 'nr_periods 0\nnr_throttled 0\nthrottled_time 0\n' >"$cg/cpu/$q/pod$u/cpu.stat"
    echo 0 >"$cg/cpuacct/$q/pod$u/cpuacct.usage"
done
be=kubepods/besteffort
echo 0-7 >"$cg/cpuset/$be/cpuset.cpus"
echo 800000 >"$cg/cpu/$be/cpu.cfs_quota_us"
echo 100000 >"$cg/cpu/$be/cpu.cfs_period_us"
echo 0 >"$cg/cpuacct/$be/cpuacct.usage"
printf 'cpu  1000 0 1000 100000 0 0 0 0 0 0\ncpu0 1000 0 1000 100000 0 0 0 0 0 0\n' >"$host/proc/stat"
printf 'MemTotal:       16777216 kB\nMemFree:         1677721 kB\nMemAvailable:    1677721 kB\n' \
    >"$host/proc/meminfo"
# The agent as its DaemonSet pod runs it: a pod of the koordlet ServiceAccount on agent-node,
# and the token the kubelet mounts for it (a TokenRequest bound to that pod), read from a file
# (kubeconfig tokenFile, as in-cluster config reads the projected token). It reports to the
# manager's NodeMetric API directly (its default, --manager-address as deploy/koordlet.yaml
# sets it), which takes the token's node-name extra as agent-node's identity.
k create -f - <<EOF
apiVersion: v1
kind: Pod
metadata: {name: koordlet-agent-node, namespace: $NS}
spec:
  serviceAccountName: koordlet
  nodeName: agent-node
  containers: [{name: koordlet, image: koord}]
EOF
expect_rc 0 "create the agent's pod on agent-node"
k -n $NS create token koordlet --bound-object-kind Pod --bound-object-name koordlet-agent-node \
    --duration 2h
expect_rc 0 "create a token bound to the agent's pod"
mkdir -p "$TMP/projected"
cp "$TMP/out" "$TMP/projected/token"
cat >"$TMP/kc-koordlet-pod" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://$server", certificate-authority: "$TMP/data/pki/ca.crt"}}]
users: [{name: u, user: {tokenFile: "$TMP/projected/token"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
EOF
# Who the token is: the ServiceAccount, with the pod and its node as extras.
k --kubeconfig "$TMP/kc-koordlet-pod" auth whoami -o json
expect_rc 0 "whoami with the pod-bound token"
expect_out "system:serviceaccount:$NS:koordlet" "whoami with the pod-bound token"
for want in '"authentication.kubernetes.io/pod-name": *\[ *"koordlet-agent-node"' \
    '"authentication.kubernetes.io/node-name": *\[ *"agent-node"' \
    '"authentication.kubernetes.io/pod-uid"' '"authentication.kubernetes.io/node-uid"'; do
    tr -d '\n' <"$TMP/out" | grep -Eq "$want" || fail "whoami extras lack $want: $(cat "$TMP/out")"
done
"$KOORD" agent --node-name agent-node --kubeconfig "$TMP/kc-koordlet-pod" \
    --manager-address "https://$maddr" --manager-ca-file "$mca" \
    --cgroup-root "$cg" --proc-root "$host/proc" --sys-root "$host/sys" --cgroup-version v1 \
    --cgroup-driver cgroupfs --resctrl-root "$host/sys/fs/resctrl" \
    --feature-gates BEMemoryEvict=true,BECPUSuppress=false \
    --listen 127.0.0.1:0 --ready-file "$TMP/a.ready" >>"$TMP/agent.log" 2>&1 &
agent=$!
wait_for "agent running" test -s "$TMP/a.ready"
evicted() { ! kubectl get pod be-job >/dev/null 2>&1; }
wait_for "be-job evicted by the agent" evicted
k get pod ls-web
expect_rc 0 "ls-web stays"
evict_event() {
    kubectl get events -n default -o jsonpath='{.items[?(@.involvedObject.name=="be-job")].reason}' |
        grep -q evictPodSuccess
}
wait_for "the agent's Event on be-job" evict_event
# The report landed in the manager's NodeMetric of agent-node (read with the same token:
# every authenticated user may read).
ptok=$(cat "$TMP/projected/token")
nm_get() {
    curl -sf --cacert "$mca" -H "Authorization: Bearer $ptok" \
        "https://$maddr/apis/metrics.koordinator.sh/v1alpha1/nodemetrics/$1" >"$TMP/nm.json"
}
reported() { nm_get agent-node && grep -q '"nodeUsage":{"resources":{[^}]*"memory"' "$TMP/nm.json"; }
wait_for "the agent's report in the manager's NodeMetric of agent-node" reported
# The same token may not report for another node: 403.
put_status() {
    curl -s -o "$TMP/out" -w '%{http_code}' --cacert "$mca" -X PUT \
        -H "Authorization: Bearer $1" -H 'Content-Type: application/json' \
        --data "{\"apiVersion\":\"metrics.koordinator.sh/v1alpha1\",\"kind\":\"NodeMetric\",\"metadata\":{\"name\":\"$2\"},\"status\":{}}" \
        "https://$maddr/apis/metrics.koordinator.sh/v1alpha1/nodemetrics/$2/status"
}
code=$(put_status "$ptok" plain-node)
[ "$code" = 403 ] || fail "pod-bound token of agent-node reporting for plain-node: $code, want 403: $(cat "$TMP/out")"
# An agent in --report-mode crd (as upstream's koordlet reports), with the plain ServiceAccount
# token: its report lands in the slo.koordinator.sh NodeMetric the manager created.
"$KOORD" agent --node-name agent-node --kubeconfig "$TMP/kc-koordlet" --report-mode crd \
    --enable-qos=false --cgroup-root "$cg" --proc-root "$host/proc" --sys-root "$host/sys" \
    --cgroup-version v1 --cgroup-driver cgroupfs --resctrl-root "$host/sys/fs/resctrl" \
    --listen 127.0.0.1:0 --ready-file "$TMP/a2.ready" >>"$TMP/agent-crd.log" 2>&1 &
agent2=$!
wait_for "crd-mode agent running" test -s "$TMP/a2.ready"
reported_crd() {
    [ -n "$(kubectl get nodemetrics.slo.koordinator.sh agent-node \
        -o jsonpath='{.status.nodeMetric.nodeUsage.resources.memory}')" ]
}
wait_for "the crd-mode agent's report in the slo.koordinator.sh NodeMetric of agent-node" reported_crd
kill -TERM "$agent2"
wait "$agent2" || fail "crd-mode agent exit status $?"
agent2=""
grep -qi 'forbidden\|permission denied' "$TMP/agent-crd.log" && fail "crd-mode agent refused something: $(grep -i 'forbidden\|permission denied' "$TMP/agent-crd.log")"
grep -qi 'forbidden\|permission denied' "$TMP/agent.log" && fail "agent refused something: $(grep -i 'forbidden\|permission denied' "$TMP/agent.log")"
grep -qi 'forbidden\|permission denied' "$TMP/scheduler.log" && fail "scheduler refused something: $(grep -i 'forbidden\|permission denied' "$TMP/scheduler.log")"
grep -qi 'forbidden\|permission denied' "$TMP/manager.log" && fail "manager refused something: $(grep -i 'forbidden\|permission denied' "$TMP/manager.log")"

# ---- what each token must not do: 403 ----
# denied SA DESC ARGS...: kubectl as SA gets kube's 403 refusal, naming the ServiceAccount.
denied() {
    local sa=$1 desc=$2
    shift 2
    as "$sa" "$@"
    expect_rc 1 "$sa: $desc"
    expect_out "is forbidden: User \"system:serviceaccount:$NS:$sa\" cannot" "$sa: $desc"
}
denied koord-scheduler "delete a Node" delete node plain-node
# The same with the token on the command line and no kubeconfig at all.
KUBECONFIG=/dev/null k --server "https://$server" --certificate-authority "$TMP/data/pki/ca.crt" \
    --token "$(cat "$TMP/token-koord-scheduler")" delete node plain-node
expect_rc 1 "koord-scheduler: delete a Node (--token)"
expect_out "nodes \"plain-node\" is forbidden: User \"system:serviceaccount:$NS:koord-scheduler\" cannot delete resource \"nodes\" in API group \"\" at the cluster scope" \
    "koord-scheduler: delete a Node (--token)"
denied koord-scheduler "read Secrets" get secrets -n $NS
denied koord-scheduler "update a Node's status" patch node plain-node --subresource status \
    --type merge -p '{"status":{"allocatable":{"cpu":"1"}}}'
denied koord-scheduler "create a ClusterRoleBinding" create clusterrolebinding x \
    --clusterrole cluster-admin --serviceaccount $NS:koord-scheduler
denied koord-scheduler "take the manager's Lease" delete lease -n $NS koordinator-manager
denied koord-scheduler "impersonate" --as admin get pods
denied koordlet "read Secrets" get secrets -n $NS
denied koordlet "delete a pod" delete pod ls-web
denied koordlet "write a NodeSLO" delete nodeslo agent-node
denied koordlet "update a Node" label node agent-node x=y
denied koordlet "create a token" create token koord-manager -n $NS
denied koordlet "impersonate" --as system:node:agent-node get pods
denied koord-manager "create a ClusterRoleBinding" create clusterrolebinding x \
    --clusterrole cluster-admin --serviceaccount $NS:koord-manager
denied koord-manager "read Secrets beyond its own" get secret -n kube-system x
denied koord-manager "list Secrets" get secrets -n $NS
denied koord-manager "delete a pod" delete pod ls-web
printf '%s' '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"ls-web"},"target":{"kind":"Node","name":"plain-node"}}' >"$TMP/binding.json"
denied koord-manager "bind a pod" create --raw /api/v1/namespaces/default/pods/ls-web/binding \
    -f "$TMP/binding.json"
denied koord-manager "update another webhook configuration" delete \
    validatingwebhookconfiguration some-other
denied koord-manager "impersonate" --as-group system:masters --as admin get pods
# The agent's plain ServiceAccount token may not write a NodeMetric of the manager's API: only
# a node identity (or a token bound to a pod on that node) may.
tok=$(cat "$TMP/token-koordlet")
code=$(curl -s -o "$TMP/out" -w '%{http_code}' --cacert "$mca" -X PUT \
    -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
    --data '{"apiVersion":"metrics.koordinator.sh/v1alpha1","kind":"NodeMetric","metadata":{"name":"agent-node"}}' \
    "https://$maddr/apis/metrics.koordinator.sh/v1alpha1/nodemetrics/agent-node/status")
[ "$code" = 403 ] || fail "koordlet token writing the manager's NodeMetric: $code, want 403: $(cat "$TMP/out")"

# ---- the /ui dashboard (deploy/rbac/dashboard.yaml) ----
# The manager asks a SubjectAccessReview (get on /ui): the koord-dashboard ServiceAccount may,
# the scheduler's may not; its Events informer (list, watch) sees the agent's eviction above.
k -n $NS create token koord-dashboard
expect_rc 0 "create token koord-dashboard"
dtok=$(cat "$TMP/out")
ui_state() { curl -s -o "$TMP/ui.json" -w '%{http_code}' --cacert "$mca" -H "Authorization: Bearer $1" \
    "https://$maddr/ui/api/state"; }
code=$(ui_state "$dtok")
[ "$code" = 200 ] || fail "dashboard state as koord-dashboard: $code, want 200: $(cat "$TMP/ui.json")"
code=$(ui_state "$(cat "$TMP/token-koord-scheduler")")
[ "$code" = 403 ] || fail "dashboard state as koord-scheduler: $code, want 403: $(cat "$TMP/ui.json")"
ui_has_eviction() { [ "$(ui_state "$dtok")" = 200 ] && grep -q '"reason":"evictPodSuccess"' "$TMP/ui.json"; }
wait_for "the agent's eviction on the dashboard" ui_has_eviction
# The login form: a session cookie for the one, the login page with 403 for the other.
code=$(curl -s -o /dev/null -D "$TMP/h" -w '%{http_code}' --cacert "$mca" \
    --data-urlencode "token=$dtok" "https://$maddr/ui/login")
[ "$code" = 303 ] || fail "login as koord-dashboard: $code, want 303"
grep -qi '^set-cookie: koord_ui_session=[0-9a-f]\{64\}; Path=/ui; Max-Age=3600; HttpOnly; Secure; SameSite=Strict' "$TMP/h" ||
    fail "login as koord-dashboard: cookie: $(grep -i set-cookie "$TMP/h")"
code=$(curl -s -o "$TMP/out" -D "$TMP/h" -w '%{http_code}' --cacert "$mca" \
    --data-urlencode "token=$(cat "$TMP/token-koord-scheduler")" "https://$maddr/ui/login")
[ "$code" = 403 ] || fail "login as koord-scheduler: $code, want 403"
grep -qi '^set-cookie' "$TMP/h" && fail "login as koord-scheduler got a cookie"

# ---- kubectl auth can-i --list: a few entries each ----
as koord-scheduler auth can-i --list
expect_rc 0 "scheduler can-i --list"
expect_out "pods/binding" "scheduler can-i --list"
# (can-i exits 0 for yes, 1 for no)
as koord-scheduler auth can-i create pods --subresource binding
expect_rc 0 "scheduler can-i create pods/binding"
as koord-scheduler auth can-i get leases/koordinator-manager -n $NS
expect_rc 1 "scheduler can-i get the manager's Lease"
as koord-manager auth can-i --list -n $NS
expect_rc 0 "manager can-i --list"
expect_out "nodeslos.slo.koordinator.sh" "manager can-i --list"
expect_out "[koordinator-webhook-certs]" "manager can-i --list"
as koord-manager auth can-i update nodes --subresource status
expect_rc 0 "manager can-i update nodes/status"
as koord-manager auth can-i update nodes
expect_rc 1 "manager can-i update nodes"
as koordlet auth can-i --list
expect_rc 0 "koordlet can-i --list"
expect_out "pods/eviction" "koordlet can-i --list"
as koordlet auth can-i delete pods
expect_rc 1 "koordlet can-i delete pods"
as koordlet auth can-i create pods --subresource eviction
expect_rc 0 "koordlet can-i create pods/eviction"

# The pod goes (force-deleted, as the kubelet confirms it): its token stops authenticating.
k -n $NS delete pod koordlet-agent-node --grace-period=0 --force
expect_rc 0 "delete the agent's pod"
k --kubeconfig "$TMP/kc-koordlet-pod" auth whoami
expect_rc 1 "whoami with the token of a deleted pod"
expect_out "Unauthorized" "whoami with the token of a deleted pod"

kill -TERM "$agent" "$sched" "$manager"
wait "$agent" || fail "agent exit status $?"
wait "$sched" || fail "scheduler exit status $?"
wait "$manager" || fail "manager exit status $?"
agent="" sched="" manager=""
finish
