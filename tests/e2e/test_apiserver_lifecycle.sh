#!/bin/bash
# koord apiserver with kubectl: deletion as kube-apiserver and its controllers run it. A
# namespace is deleted in two steps (Terminating, its content deleted with finalizers
# honoured, then the namespace), new content in it is refused meanwhile, and `kubectl wait
# --for=delete` sees it go; a pod bound to a node is deleted gracefully and the apiserver
# completes the deletion once the grace period has passed (no kubelet runs here); a forced
# delete is immediate; an unbound pod goes at once. Evictions are graceful too: `kubectl drain`
# evicts a node's pods, which show Terminating with the DisruptionTarget condition and go when
# their grace period ends, and an Eviction posted with kubectl takes its deleteOptions. The
# namespaces/finalize subresource (kubectl replace --raw) writes spec.finalizers, validated,
# and a terminating namespace goes once its finalizers and its content are gone.
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"
command -v kubectl >/dev/null || { echo "kubectl not installed; skipping"; exit 0; }

start_apiserver "$TMP/data"

# ---- namespaces ----
k create namespace doomed
expect_rc 0 "create namespace"
k get namespace doomed -o jsonpath='{.spec.finalizers} {.status.phase}'
expect_out '["kubernetes"] Active' "a new namespace's finalizer and phase"
k create configmap plain -n doomed --from-literal=a=b
expect_rc 0 "configmap in doomed"
cat >"$TMP/held.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: held, namespace: doomed, finalizers: [example.com/hold]}
YAML
k create -f "$TMP/held.yaml"
expect_rc 0 "finalizer-holding configmap"

k delete namespace doomed --wait=false
expect_rc 0 "delete namespace"
expect_out 'namespace "doomed" deleted' "delete namespace"
k get namespace doomed
expect_out "Terminating" "namespace shows Terminating"

k create configmap late -n doomed --from-literal=a=b
expect_rc 1 "create into a terminating namespace"
expect_out 'configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated' \
    "create into a terminating namespace"

plain_gone() { ! kubectl get configmap plain -n doomed >/dev/null 2>&1; }
wait_for "content without finalizers deleted" plain_gone
held_marked() { kubectl get configmap held -n doomed -o jsonpath='{.metadata.deletionTimestamp}' | grep -q T; }
wait_for "the finalizer-held configmap marked for deletion" held_marked
cond_is() { kubectl get namespace doomed -o jsonpath="{.status.conditions[?(@.type==\"$1\")].message}" | grep -qF "$2"; }
wait_for "NamespaceFinalizersRemaining names the finalizer" cond_is NamespaceFinalizersRemaining \
    "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
wait_for "NamespaceContentRemaining counts the configmap" cond_is NamespaceContentRemaining \
    "Some resources are remaining: configmaps. has 1 resource instances"
k get namespace doomed -o jsonpath='{.metadata.name}'
expect_rc 0 "the namespace stays while content remains"

# The controller behind the finalizer lets go: the namespace empties and goes.
k patch configmap held -n doomed --type merge -p '{"metadata":{"finalizers":null}}'
expect_rc 0 "remove the finalizer"
k wait --for=delete namespace/doomed --timeout=20s
expect_rc 0 "kubectl wait --for=delete"
k get namespace doomed
expect_rc 1 "namespace gone"
expect_out 'namespaces "doomed" not found' "namespace gone"

# `kubectl delete namespace` waits for the end by default.
k create namespace short
k create configmap c -n short --from-literal=a=b
k delete namespace short --timeout=20s
expect_rc 0 "delete namespace (waiting)"
k get namespace short
expect_rc 1 "waited-for namespace gone"

# ---- pods ----
k create -f - <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1}
YAML
pod() {
    cat >"$TMP/pod-$1.yaml" <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  $2
  containers: [{name: c, image: pause}]
YAML
    k create -f "$TMP/pod-$1.yaml"
    expect_rc 0 "create pod $1"
}
pod graceful 'nodeName: n1'
pod quick 'nodeName: n1'
pod short 'nodeName: n1'
pod pending ''

k delete pod graceful --wait=false
expect_rc 0 "graceful delete"
k get pod graceful -o jsonpath='{.metadata.deletionGracePeriodSeconds}'
expect_out "30" "the default grace period"
k get pod graceful
expect_out "Terminating" "a pod in its grace period shows Terminating"

k delete pod quick --grace-period=0 --force
expect_rc 0 "forced delete"
k get pod quick
expect_rc 1 "forced delete is immediate"

k delete pod pending --wait=false
k get pod pending
expect_rc 1 "an unbound pod is deleted at once"

# A short grace period runs out and the apiserver completes the deletion.
k delete pod short --grace-period=1 --timeout=20s
expect_rc 0 "delete with --grace-period=1 waits and returns"
k get pod short
expect_rc 1 "pod gone after its grace period"

# The graceful pod is still there; a second, forced delete ends it now.
k get pod graceful -o jsonpath='{.metadata.name}'
expect_out "graceful" "the graceful pod waits out its period"
k delete pod graceful --grace-period=0 --force
k get pod graceful
expect_rc 1 "forced delete of a terminating pod"

# ---- evictions ----
# An Eviction as a user posts it: the pod's own grace period, Terminating, the condition.
pod evicted 'nodeName: n1
  terminationGracePeriodSeconds: 3'
printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"evicted"}}' >"$TMP/ev.json"
k create --raw /api/v1/namespaces/default/pods/evicted/eviction -f "$TMP/ev.json"
expect_rc 0 "evict a bound pod"
expect_out '"status":"Success"' "eviction answers Success"
k get pod evicted
expect_out "Terminating" "an evicted pod shows Terminating"
k get pod evicted -o jsonpath='{.metadata.deletionGracePeriodSeconds} {.status.conditions[?(@.type=="DisruptionTarget")].reason}'
expect_out "3 EvictionByEvictionAPI" "the pod's grace period and kube's DisruptionTarget condition"
k wait --for=delete pod/evicted --timeout=20s
expect_rc 0 "the evicted pod goes when its grace period ends"

# deleteOptions: a precondition that does not hold is a conflict; a dry run changes nothing.
pod kept 'nodeName: n1'
printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"kept"},"deleteOptions":{"preconditions":{"uid":"not-the-uid"}}}' >"$TMP/ev.json"
k create --raw /api/v1/namespaces/default/pods/kept/eviction -f "$TMP/ev.json"
expect_rc 1 "eviction with a stale uid precondition"
expect_out "Conflict" "a precondition that does not hold"
printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"kept"},"deleteOptions":{"dryRun":["All"]}}' >"$TMP/ev.json"
k create --raw /api/v1/namespaces/default/pods/kept/eviction -f "$TMP/ev.json"
expect_rc 0 "dry-run eviction"
k get pod kept -o jsonpath='{.metadata.deletionTimestamp}|{.status.conditions[?(@.type=="DisruptionTarget")].reason}'
[ "$(cat "$TMP/out")" = "|" ] || fail "a dry-run or refused eviction changed the pod: $(cat "$TMP/out")"

# kubectl drain: cordon, then evict every pod of the node and wait for each to go.
k create -f - <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n2}
YAML
pod drained-a 'nodeName: n2
  terminationGracePeriodSeconds: 2'
pod drained-b 'nodeName: n2
  terminationGracePeriodSeconds: 2'
k drain n2 --force --timeout=30s
expect_rc 0 "kubectl drain"
expect_out 'evicting pod default/drained-a' "drain evicts through the Eviction API"
expect_out 'pod/drained-b evicted' "drain waits for the evicted pods"
expect_out 'node/n2 drained' "drain finishes"
k get pods --field-selector spec.nodeName=n2 -o name
[ ! -s "$TMP/out" ] || fail "pods left on the drained node: $(cat "$TMP/out")"
k get node n2 -o jsonpath='{.spec.unschedulable}'
expect_out "true" "drain cordons the node"

# ---- namespaces/finalize ----
cat >"$TMP/fin.yaml" <<'YAML'
apiVersion: v1
kind: Namespace
metadata: {name: fin}
spec: {finalizers: [example.com/hold]}
YAML
k create -f "$TMP/fin.yaml"
expect_rc 0 "namespace with a foreign finalizer"
k create configmap c -n fin --from-literal=a=b
k delete namespace fin --wait=false
expect_rc 0 "delete namespace fin"
# The content goes and the apiserver removes `kubernetes`; the foreign finalizer holds it.
fin_is() { [ "$(kubectl get namespace fin -o jsonpath='{.spec.finalizers}')" = "$1" ]; }
wait_for "only the foreign finalizer left" fin_is '["example.com/hold"]'
k get namespace fin
expect_out "Terminating" "namespace held by its finalizer"
# What a namespace controller does: PUT the namespace, without its finalizer, to finalize.
printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"fin"},"spec":{"finalizers":["foo"]}}' >"$TMP/fin.json"
k replace --raw /api/v1/namespaces/fin/finalize -f "$TMP/fin.json"
expect_rc 1 "a finalizer name that is not qualified"
expect_out 'The Namespace "fin" is invalid: spec.finalizers[0]: Invalid value: "foo": name is neither a standard finalizer name nor is it fully qualified' \
    "kube's finalizer name rule"
k get --raw /api/v1/namespaces/fin/finalize
expect_rc 1 "finalize takes only PUT"
expect_out "MethodNotAllowed" "GET on finalize"
printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"fin"},"spec":{"finalizers":[]}}' >"$TMP/fin.json"
k replace --raw /api/v1/namespaces/fin/finalize -f "$TMP/fin.json"
expect_rc 0 "finalize"
k wait --for=delete namespace/fin --timeout=20s
expect_rc 0 "the finalized namespace goes"

finish
