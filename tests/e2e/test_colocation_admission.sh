#!/bin/bash
# Admission end to end, the way a cluster runs it (issue 16): koord apiserver calls the webhooks
# koord manager serves and registers itself (--register-webhooks), kubectl is the client.
#   - a ClusterColocationProfile selecting a namespace turns a plain pod into a BE pod:
#     koord-batch priority, kubernetes.io/batch-cpu in integer millicores, batch-memory, the
#     extended-resource-spec annotation, schedulerName koord-scheduler; koord scheduler then
#     places it on the node's batch capacity;
#   - a pod with batch resources but no BE QoS label is refused with /validate-pod's message;
#   - an invalid slo-controller-config edit is refused with /validate-configmap's message and the
#     stored ConfigMap stays as it was;
#   - the webhook down: failurePolicy Fail refuses the pod with kube's "failed calling webhook",
#     Ignore lets it through unmutated.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 0; }

start_apiserver "$TMP/data"
# mkns NAME: a namespace (from a manifest: `kubectl create namespace` sends protobuf).
mkns() { printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"%s"}}' "$1" | k create -f -; }
mpid="" spid=""
trap 'kill -9 $pid $mpid $spid 2>/dev/null || true; rm -rf "$TMP"' EXIT
k apply -f "$KOORD_SOURCE_DIR/deploy/crds/" -f "$KOORD_SOURCE_DIR/deploy/priorityclasses.yaml"
expect_rc 0 "apply CRDs and priority classes"
mkns koordinator-system
expect_rc 0 "create koordinator-system"
k create -f "$KOORD_SOURCE_DIR/deploy/slo-controller-config.yaml"
expect_rc 0 "create slo-controller-config"

# A node with batch capacity, as the manager's NodeResource controller leaves it.
cat >"$TMP/node.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110", kubernetes.io/batch-cpu: "6000",
                kubernetes.io/batch-memory: 24Gi}
  conditions: [{type: Ready, status: "True"}]
EOF
k create -f "$TMP/node.yaml"
expect_rc 0 "create node"

"$KOORD" manager --listen 127.0.0.1:0 --ready-file "$TMP/mready" --cert-dir "$TMP/m" \
    --client-ca-file "$TMP/data/pki/ca.crt" --webhook-listen 127.0.0.1:0 \
    --webhook-ready-file "$TMP/wready" --register-webhooks 127.0.0.1:0 \
    --feature-gates ConfigMapValidatingWebhook=true \
    --leader-election-lease-duration 3 --leader-election-renew-deadline 2 \
    --leader-election-retry-period 1 >>"$TMP/manager.log" 2>&1 &
mpid=$!
wait_for "manager listening" test -s "$TMP/mready"
wait_for "webhooks listening" test -s "$TMP/wready"
wait_for "webhook configurations registered" \
    kubectl get mutatingwebhookconfiguration koordinator-mutating-webhook-configuration
wait_for "validating webhook configuration registered" \
    kubectl get validatingwebhookconfiguration koordinator-validating-webhook-configuration
wait_for "manager ready" curl -sfk "https://$(cat "$TMP/mready")/readyz"
ca=$(kubectl get mutatingwebhookconfiguration koordinator-mutating-webhook-configuration \
    -o jsonpath='{.webhooks[0].clientConfig.caBundle}')
[ -n "$ca" ] || fail "the manager wrote no caBundle"

cat >"$TMP/sched.yaml" <<'EOF'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
profiles: [{schedulerName: koord-scheduler}]
EOF
"$KOORD" scheduler --kubeconfig "$KUBECONFIG" --config "$TMP/sched.yaml" --listen 127.0.0.1:0 \
    --ready-file "$TMP/sready" >>"$TMP/scheduler.log" 2>&1 &
spid=$!
wait_for "scheduler listening" test -s "$TMP/sready"

# ---- a ClusterColocationProfile at work ----
mkns batch-jobs
expect_rc 0 "create namespace"
k label namespace batch-jobs koordinator.sh/enable-colocation=true
expect_rc 0 "label namespace"
cat >"$TMP/ccp.yaml" <<'EOF'
apiVersion: config.koordinator.sh/v1alpha1
kind: ClusterColocationProfile
metadata: {name: colocation-profile-example}
spec:
  namespaceSelector: {matchLabels: {koordinator.sh/enable-colocation: "true"}}
  qosClass: BE
  priorityClassName: koord-batch
  koordinatorPriority: 1000
  schedulerName: koord-scheduler
  labels: {koordinator.sh/mutated: "true"}
EOF
k apply -f "$TMP/ccp.yaml"
expect_rc 0 "apply CCP"
cat >"$TMP/pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: spark-executor, namespace: batch-jobs}
spec:
  containers:
  - name: main
    image: busybox
    resources:
      requests: {cpu: 500m, memory: 1Gi}
      limits: {cpu: "1", memory: 2Gi}
EOF
k create -f "$TMP/pod.yaml"
expect_rc 0 "create pod in the colocation namespace"
k get pod -n batch-jobs spark-executor -o json
expect_rc 0 "get mutated pod"
cp "$TMP/out" "$TMP/pod.json"
jq_get() { python3 -c "import json,sys; d=json.load(open('$TMP/pod.json')); print($1)"; }
[ "$(jq_get "d['metadata']['labels'].get('koordinator.sh/qosClass')")" = BE ] ||
    fail "QoS label not set: $(cat "$TMP/pod.json")"
[ "$(jq_get "d['metadata']['labels'].get('koordinator.sh/priority')")" = 1000 ] ||
    fail "koordinator priority label not set"
[ "$(jq_get "d['metadata']['labels'].get('koordinator.sh/mutated')")" = true ] ||
    fail "profile labels not set"
[ "$(jq_get "d['spec']['priorityClassName']") $(jq_get "d['spec']['priority']")" = "koord-batch 5000" ] ||
    fail "priority class not resolved: $(jq_get "d['spec'].get('priorityClassName')") $(jq_get "d['spec'].get('priority')")"
[ "$(jq_get "d['spec']['schedulerName']")" = koord-scheduler ] || fail "schedulerName not set"
res=$(jq_get "json.dumps(d['spec']['containers'][0]['resources'], sort_keys=True)")
# cpu 1 -> 1000 millicores, stored as kube stores the quantity 1000: "1k".
[ "$res" = '{"limits": {"kubernetes.io/batch-cpu": "1k", "kubernetes.io/batch-memory": "2Gi"}, "requests": {"kubernetes.io/batch-cpu": "500", "kubernetes.io/batch-memory": "1Gi"}}' ] ||
    fail "resources not translated to batch resources: $res"
[ -n "$(jq_get "d['metadata']['annotations'].get('node.koordinator.sh/extended-resource-spec', '')")" ] ||
    fail "no extended-resource-spec annotation"
# ... and it lands on the node's batch capacity.
bound() { [ "$(kubectl get pod -n batch-jobs "$1" -o jsonpath='{.spec.nodeName}')" = n1 ]; }
wait_for "BE pod bound by koord scheduler" bound spark-executor

# A namespace the profile does not select: the pod stays as written.
mkns web
k create -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: plain, namespace: web}
spec: {containers: [{name: main, image: busybox, resources: {requests: {cpu: 500m}}}]}
EOF
expect_rc 0 "create pod outside the profile"
k get pod -n web plain -o jsonpath='{.spec.containers[0].resources.requests.cpu}/{.metadata.labels}/{.spec.schedulerName}'
expect_out "500m//default-scheduler" "pod outside the profile unchanged (kube's default schedulerName)"

# ---- /validate-pod ----
k create -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: sneaky, namespace: web}
spec:
  containers:
  - name: main
    image: busybox
    resources: {requests: {kubernetes.io/batch-cpu: "500"}, limits: {kubernetes.io/batch-cpu: "500"}}
EOF
expect_rc 1 "batch resources without BE refused"
expect_out 'admission webhook "vpod.koordinator.sh" denied the request' "vpod denial worded as kube"
expect_out "must specify koordinator QoS BE with koordinator colocation resources" "vpod reason"
k get pod -n web sneaky
expect_rc 1 "refused pod not stored"

# ---- /validate-configmap ----
before=$(kubectl get configmap -n koordinator-system slo-controller-config -o jsonpath='{.data.colocation-config}')
k patch configmap -n koordinator-system slo-controller-config --type merge \
    -p '{"data":{"colocation-config":"{\"enable\":true,\"cpuReclaimThresholdPercent\":-5}"}}'
expect_rc 1 "invalid colocation-config refused"
expect_out 'admission webhook "vconfigmap.koordinator.sh" denied the request' "vconfigmap denial"
expect_out "ConfigParamInvalid" "vconfigmap reason"
after=$(kubectl get configmap -n koordinator-system slo-controller-config -o jsonpath='{.data.colocation-config}')
[ "$before" = "$after" ] || fail "the refused edit changed the ConfigMap"
k patch configmap -n koordinator-system slo-controller-config --type merge \
    -p '{"data":{"colocation-config":"{\"enable\":true,\"cpuReclaimThresholdPercent\":60}"}}'
expect_rc 0 "valid colocation-config accepted"

# ---- the webhook down ----
kill "$mpid"
wait "$mpid" 2>/dev/null || true
mpid=""
sed 's/spark-executor/second/' "$TMP/pod.yaml" >"$TMP/pod2.yaml"
k create -f "$TMP/pod2.yaml"
expect_rc 1 "Fail policy refuses while the webhook is down"
expect_out 'failed calling webhook "mpod-create.koordinator.sh"' "Fail policy error"
k get pod -n batch-jobs second
expect_rc 1 "nothing stored while the webhook is down"
# ignore KIND NAME: every webhook of the configuration to failurePolicy Ignore.
ignore() {
    local n ops="" i
    n=$(kubectl get "$1" "$2" -o jsonpath='{range .webhooks[*]}x{end}')
    for ((i = 0; i < ${#n}; i++)); do
        ops="$ops${ops:+,}{\"op\":\"replace\",\"path\":\"/webhooks/$i/failurePolicy\",\"value\":\"Ignore\"}"
    done
    k patch "$1" "$2" --type json -p "[$ops]"
    expect_rc 0 "switch $2 to Ignore"
}
ignore mutatingwebhookconfiguration koordinator-mutating-webhook-configuration
ignore validatingwebhookconfiguration koordinator-validating-webhook-configuration
k create -f "$TMP/pod2.yaml"
expect_rc 0 "Ignore lets the pod through"
k get pod -n batch-jobs second -o jsonpath='{.spec.containers[0].resources.requests.cpu}'
expect_out "500m" "pod admitted unmutated"
finish
