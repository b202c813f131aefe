#!/bin/bash
# `make up`: the standalone control plane on this machine. Starts `koord apiserver` and
# `koord manager` wired together the way a cluster wires them (the manager trusts the CAs the
# API server publishes in kube-system/extension-apiserver-authentication, and registers the
# NodeMetric API as an APIService the API server proxies to, and its admission webhooks as the
# webhook configurations the API server calls), applies the CRDs, the priority classes, upstream's
# default slo-controller-config and the example ClusterColocationProfile (pods of namespaces
# labelled koordinator.sh/enable-colocation=true become batch pods), registers this machine as a
# Node, runs
# `koord agent` for it (so its NodeMetric shows this host's real usage), starts `koord scheduler`
# with profiles for koord-scheduler and default-scheduler (no other scheduler runs here, so every
# pod created is placed on this host), prints how to open the manager's /ui dashboard (a
# ServiceAccount koord-dashboard whose token logs a browser in), and stays in the foreground until
# Ctrl-C, which stops all four. State lives in .koord/ and is reused.
#
# Environment: KOORD_LISTEN (API server, default 127.0.0.1:6443), KOORD_MANAGER_LISTEN
# (manager, default 127.0.0.1:9443), KOORD_AGENT_LISTEN (agent /metrics, 127.0.0.1:9316),
# KOORD_SCHEDULER_LISTEN (scheduler /metrics, 127.0.0.1:10259).
set -euo pipefail
KOORD=$(realpath "${1:-build/gcc/koord}")
cd "$(dirname "$0")/.."

LISTEN=${KOORD_LISTEN:-127.0.0.1:6443}
MLISTEN=${KOORD_MANAGER_LISTEN:-127.0.0.1:9443}
WLISTEN=${KOORD_WEBHOOK_LISTEN:-127.0.0.1:9876}
ALISTEN=${KOORD_AGENT_LISTEN:-127.0.0.1:9316}
SLISTEN=${KOORD_SCHEDULER_LISTEN:-127.0.0.1:10259}
STATE=$PWD/.koord
export KUBECONFIG=$STATE/kubeconfig
apid="" mpid="" agpid="" spid=""

# The servers run in sessions of their own (setsid), so that Ctrl-C reaches this script only and
# they stop in order: the scheduler and the agent, the manager (releasing their Leases while the
# API server still serves), the API server.
stop() {
    trap - EXIT INT TERM
    [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null || true
    [ -n "$agpid" ] && kill "$agpid" 2>/dev/null && wait "$agpid" 2>/dev/null || true
    [ -n "$mpid" ] && kill "$mpid" 2>/dev/null && wait "$mpid" 2>/dev/null || true
    [ -n "$apid" ] && kill "$apid" 2>/dev/null && wait "$apid" 2>/dev/null || true
}
trap 'stop; exit 130' INT TERM
trap stop EXIT
die() {
    echo "make up: $*" >&2
    for log in apiserver manager agent scheduler; do
        [ -s "$STATE/$log.log" ] && { echo "--- last lines of $STATE/$log.log" >&2; tail -n 20 "$STATE/$log.log" >&2; }
    done
    exit 1
}
# wait_file FILE PID WHAT: until FILE is non-empty, while PID lives (30 s at most).
wait_file() {
    for _ in $(seq 1 300); do
        [ -s "$1" ] && return 0
        kill -0 "$2" 2>/dev/null || die "$3 exited"
        sleep 0.1
    done
    die "$3 not ready after 30 s"
}

echo "== koord version"
"$KOORD" version
echo "== koord validate -f examples/seed -f examples/reference -f examples/core"
"$KOORD" validate -f examples/seed -f examples/reference -f examples/core >/dev/null
echo "   all valid"

mkdir -p "$STATE"
rm -f "$STATE/apiserver.ready" "$STATE/manager.ready" "$STATE/agent.ready" "$STATE/scheduler.ready"
echo "== koord apiserver on $LISTEN (data in $STATE/apiserver, log $STATE/apiserver.log)"
setsid "$KOORD" apiserver --data-dir "$STATE/apiserver" --listen "$LISTEN" \
    --ready-file "$STATE/apiserver.ready" --write-kubeconfig "$KUBECONFIG" \
    >>"$STATE/apiserver.log" 2>&1 &
apid=$!
wait_file "$STATE/apiserver.ready" "$apid" "koord apiserver"

echo "== kubectl apply -f deploy/crds/ -f deploy/priorityclasses.yaml -f deploy/slo-controller-config.yaml"
kubectl apply -f deploy/crds/ -f deploy/priorityclasses.yaml >/dev/null || die "applying the CRDs failed"
kubectl get namespace koordinator-system >/dev/null 2>&1 ||
    kubectl create namespace koordinator-system >/dev/null || die "creating koordinator-system failed"
# Applied only when absent, so that edits made with kubectl survive a restart.
kubectl get configmap -n koordinator-system slo-controller-config >/dev/null 2>&1 ||
    kubectl create -f deploy/slo-controller-config.yaml >/dev/null || die "creating slo-controller-config failed"
# The label the ConfigMap webhook selects (a ConfigMap created before it was added lacks it).
# Only when missing: with the label, the write would go to the webhook, whose manager (and
# failurePolicy Fail) is not up yet on a restart.
[ "$(kubectl get configmap -n koordinator-system slo-controller-config \
    -o jsonpath='{.metadata.labels.koordinator\.sh/configmap-type}')" = slo-controller-config ] ||
    kubectl label configmap -n koordinator-system slo-controller-config --overwrite \
        koordinator.sh/configmap-type=slo-controller-config >/dev/null ||
    die "labelling slo-controller-config failed"

# This machine as a Node: its name, CPUs and memory, Ready. (kubelet would keep the status
# fresh; here it is written once.)
node=$(hostname | tr 'A-Z_' 'a-z-')
cpus=$(nproc)
mem_kib=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
echo "== node $node ($cpus CPUs, $((mem_kib / 1024)) MiB)"
kubectl apply -f - >/dev/null <<EOF || die "registering node $node failed"
apiVersion: v1
kind: Node
metadata:
  name: $node
  labels:
    kubernetes.io/hostname: $node
    kubernetes.io/os: linux
    kubernetes.io/arch: $arch
status:
  capacity: {cpu: "$cpus", memory: ${mem_kib}Ki, pods: "110"}
  allocatable: {cpu: "$cpus", memory: ${mem_kib}Ki, pods: "110"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: "registered by make up",
     lastHeartbeatTime: "$now", lastTransitionTime: "$now"}
EOF

echo "== koord manager on $MLISTEN, webhooks on $WLISTEN (certificates in $STATE/manager, log $STATE/manager.log)"
setsid "$KOORD" manager --kubeconfig "$KUBECONFIG" --listen "$MLISTEN" --cert-dir "$STATE/manager" \
    --ready-file "$STATE/manager.ready" --register-apiservice "$MLISTEN" \
    --webhook-listen "$WLISTEN" --register-webhooks "$WLISTEN" \
    --feature-gates ConfigMapValidatingWebhook=true \
    >>"$STATE/manager.log" 2>&1 &
mpid=$!
wait_file "$STATE/manager.ready" "$mpid" "koord manager"
# Available once the manager leads: at once, or when the Lease of a manager that did not stop
# cleanly has expired (15 s).
available() {
    kubectl get apiservice v1alpha1.metrics.koordinator.sh \
        -o jsonpath='{.status.conditions[?(@.type=="Available")].status}' 2>/dev/null | grep -qx True
}
for _ in $(seq 1 300); do
    available && break
    kill -0 "$mpid" 2>/dev/null || die "koord manager exited"
    sleep 0.1
done
available || die "the NodeMetric APIService v1alpha1.metrics.koordinator.sh is not Available after 30 s"
# kubectl caches discovery for hours and would go on resolving `nodemetrics` to the
# slo.koordinator.sh CRD it saw before the APIService existed: drop this server's cache.
rm -rf "${HOME:-/root}/.kube/cache/discovery/$(printf %s "$LISTEN" | sed 's/[^A-Za-z0-9.-]/_/g')"

# Admission: the manager registers its webhooks; then the example ClusterColocationProfile,
# which turns pods of namespaces labelled koordinator.sh/enable-colocation=true into batch pods.
registered() {
    kubectl get mutatingwebhookconfiguration koordinator-mutating-webhook-configuration \
        -o jsonpath='{.webhooks[0].clientConfig.caBundle}' 2>/dev/null | grep -q .
}
for _ in $(seq 1 300); do
    registered && break
    kill -0 "$mpid" 2>/dev/null || die "koord manager exited"
    sleep 0.1
done
registered || die "koord manager did not register its admission webhooks after 30 s"
echo "== kubectl apply -f examples/colocation/colocation-profile.yaml"
kubectl apply -f examples/colocation/colocation-profile.yaml >/dev/null ||
    die "applying the ClusterColocationProfile failed"

# The agent for this machine: its usage, reported to the manager (through the admin
# credentials of the kubeconfig; in a cluster it would use the node's own). --dry-run: its QoS
# strategies log what they would write; a development machine's cgroups are not ours to change.
echo "== koord agent for node $node (metrics on $ALISTEN, log $STATE/agent.log)"
setsid "$KOORD" agent --node-name "$node" --kubeconfig "$KUBECONFIG" \
    --manager-address "https://$MLISTEN" --manager-ca-file "$STATE/manager/koord-manager-ca.crt" \
    --listen "$ALISTEN" --ready-file "$STATE/agent.ready" --dry-run >>"$STATE/agent.log" 2>&1 &
agpid=$!
wait_file "$STATE/agent.ready" "$agpid" "koord agent"
reported() {
    [ -n "$(kubectl get nodemetrics.metrics.koordinator.sh "$node" \
        -o jsonpath='{.status.nodeMetric.nodeUsage.resources.cpu}' 2>/dev/null)" ]
}
for _ in $(seq 1 300); do
    reported && break
    kill -0 "$agpid" 2>/dev/null || die "koord agent exited"
    sleep 0.1
done
reported || die "no NodeMetric report from the agent after 30 s"

# The scheduler: both names, so `kubectl run` (default-scheduler) and Koordinator manifests
# (koord-scheduler) are placed alike. It schedules once it holds its Lease: at once, or when the
# Lease of a scheduler that did not stop cleanly has expired (15 s).
echo "== koord scheduler (metrics on $SLISTEN, log $STATE/scheduler.log)"
setsid "$KOORD" scheduler --kubeconfig "$KUBECONFIG" --scheduler-name koord-scheduler \
    --scheduler-name default-scheduler --listen "$SLISTEN" --ready-file "$STATE/scheduler.ready" \
    >>"$STATE/scheduler.log" 2>&1 &
spid=$!
wait_file "$STATE/scheduler.ready" "$spid" "koord scheduler"

# The dashboard's viewer: a ServiceAccount allowed to get /ui (deploy/rbac/dashboard.yaml), whose
# token logs a browser in.
kubectl apply -f deploy/rbac/dashboard.yaml >/dev/null || die "applying deploy/rbac/dashboard.yaml failed"

echo
echo "The control plane is up; Ctrl-C stops it. The dashboard (live usage, batch capacity,"
echo "pending pods, evictions): open https://$MLISTEN/ui/ and log in with the token of"
echo
echo "    KUBECONFIG=$KUBECONFIG kubectl create token koord-dashboard -n koordinator-system"
echo
echo "(the manager's certificate is signed by $STATE/manager/koord-manager-ca.crt: import it into"
echo "the browser, or accept the warning). In another shell:"
echo
echo "    export KUBECONFIG=$KUBECONFIG"
echo "    kubectl get nodes,nodeslos,nodemetrics"
echo "    kubectl get nodemetric $node -o yaml     # this host's usage, as the agent reports it"
echo "    kubectl create -f examples/core/pod-batch.yaml && kubectl get pod batch-worker-0 -o wide"
echo "    kubectl apply -f examples/colocation/spark-namespace.yaml -f examples/colocation/spark-executor.yaml"
echo "    kubectl get pod -n spark-demo spark-executor-0 -o yaml   # a batch pod, by the ClusterColocationProfile"
echo
kubectl get nodes,nodeslos,nodemetrics || true
echo
kubectl get nodemetric "$node" \
    -o jsonpath='node usage: cpu {.status.nodeMetric.nodeUsage.resources.cpu}, memory {.status.nodeMetric.nodeUsage.resources.memory}{"\n"}' || true
echo
# Until Ctrl-C, or until either server stops on its own.
set +e
wait -n "$apid" "$mpid" "$agpid" "$spid"
rc=$?
die "a server exited (status $rc)"
