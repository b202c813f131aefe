#!/bin/bash
# koord apiserver with kubectl: deletion as kube-apiserver and its controllers run it. A
# namespace is deleted in two steps (Terminating, its content deleted with finalizers
# honoured, then the namespace), new content in it is refused meanwhile, and `kubectl wait
# --for=delete` sees it go; a pod bound to a node is deleted gracefully and the apiserver
# completes the deletion once the grace period has passed (no kubelet runs here); a forced
# delete is immediate; an unbound pod goes at once.
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

finish
