#!/bin/bash
# Strategic merge patch in koord apiserver, driven by the real kubectl: a second `kubectl apply`
# of a Pod (env value changed, a port removed, containers reordered, a container added), of a
# ConfigMap and of a Node (labels dropped from the manifest disappear from the object);
# `kubectl patch --type strategic` adding a toleration and deleting a container with
# "$patch": "delete"; malformed strategic patches answered 400 and strategic patches of custom
# resources 415, as kube-apiserver does.
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"
command -v kubectl >/dev/null || { echo "kubectl not installed; skipping"; exit 0; }

# get KIND/NAME JSONPATH WANT: the stored object's field, compared exactly.
expect_get() {
    k get "$1" -o "jsonpath=$2"
    expect_rc 0 "get $1 $2"
    [ "$(cat "$TMP/out")" = "$3" ] || fail "get $1 $2: '$(cat "$TMP/out")', want '$3'"
}

start_apiserver "$TMP/data"

# ---- Pod: apply, edit the manifest, apply again ----
cat >"$TMP/pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
  labels: {app: web, tier: front}
spec:
  containers:
  - name: app
    image: nginx:1.25
    env:
    - {name: A, value: "1"}
    - {name: B, value: "2"}
    ports:
    - {containerPort: 80}
    - {containerPort: 8080}
  - name: side
    image: busybox:1.36
    env:
    - {name: X, value: "1"}
EOF
k apply -f "$TMP/pod.yaml"
expect_rc 0 "first apply of the pod"
expect_out "pod/web created" "first apply of the pod"

# Someone else adds a finalizer and a label: apply must keep what it does not own.
k patch pod web --type strategic -p '{"metadata":{"finalizers":["example.com/keep"],"labels":{"other":"x"}}}'
expect_rc 0 "strategic patch adding a finalizer"

cat >"$TMP/pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
  labels: {app: web}
spec:
  containers:
  - name: side
    image: busybox:1.36
    env:
    - {name: X, value: "1"}
    - {name: C, value: "3"}
  - name: app
    image: nginx:1.25
    env:
    - {name: A, value: "9"}
    - {name: B, value: "2"}
    ports:
    - {containerPort: 80}
  - name: third
    image: busybox:1.36
EOF
k apply -f "$TMP/pod.yaml"
expect_rc 0 "second apply of the pod"
expect_out "pod/web configured" "second apply of the pod"
expect_get pod/web '{.spec.containers[*].name}' "side app third"
expect_get pod/web '{.spec.containers[?(@.name=="app")].env[*].name}' "A B"
expect_get pod/web '{.spec.containers[?(@.name=="app")].env[?(@.name=="A")].value}' "9"
expect_get pod/web '{.spec.containers[?(@.name=="app")].ports[*].containerPort}' "80"
expect_get pod/web '{.spec.containers[?(@.name=="side")].env[*].name}' "X C"
expect_get pod/web '{.metadata.labels}' '{"app":"web","other":"x"}'
expect_get pod/web '{.metadata.finalizers}' '["example.com/keep"]'
# Applying the same manifest again changes nothing.
k apply -f "$TMP/pod.yaml"
expect_rc 0 "third apply of the pod"
expect_out "pod/web unchanged" "third apply of the pod"

# ---- kubectl patch --type strategic ----
# tolerations are atomic: the patch's list replaces the (defaulted or absent) one.
k patch pod web --type strategic -p '{"spec":{"tolerations":[{"key":"dedicated","operator":"Exists","effect":"NoSchedule"}]}}'
expect_rc 0 "strategic patch adding a toleration"
expect_get pod/web '{.spec.tolerations[*].key}' "dedicated"
# A merge list keeps the elements the patch does not name; $patch: delete removes one.
k patch pod web --type strategic -p '{"spec":{"containers":[{"name":"third","$patch":"delete"},{"name":"app","image":"nginx:1.26"}]}}'
expect_rc 0 "strategic patch deleting a container"
expect_get pod/web '{.spec.containers[*].name}' "side app"
expect_get pod/web '{.spec.containers[?(@.name=="app")].image}' "nginx:1.26"
expect_get pod/web '{.spec.containers[?(@.name=="app")].env[?(@.name=="A")].value}' "9"
# $deleteFromPrimitiveList drops the finalizer.
k patch pod web --type strategic -p '{"metadata":{"$deleteFromPrimitiveList/finalizers":["example.com/keep"]}}'
expect_rc 0 "strategic patch removing the finalizer"
expect_get pod/web '{.metadata.finalizers}' ""
# Malformed: 400 with the reason, nothing changed.
k patch pod web --type strategic -p '{"spec":{"containers":[{"image":"x"}]}}'
expect_rc 1 "strategic patch without merge key"
expect_out 'spec.containers: patch element 0 has no merge key' "strategic patch without merge key"
k patch pod web --type strategic -p '{"spec":{"$patch":"merge"}}'
expect_rc 1 "strategic patch with \$patch: merge"
expect_out 'unknown patch type' "strategic patch with \$patch: merge"
expect_get pod/web '{.spec.containers[*].name}' "side app"

# ---- ConfigMap: keys and labels removed from the manifest go ----
cat >"$TMP/cm.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
  labels: {a: "1", b: "2"}
data: {one: "1", two: "2"}
EOF
k apply -f "$TMP/cm.yaml"
expect_rc 0 "first apply of the configmap"
cat >"$TMP/cm.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
  labels: {a: "1", c: "3"}
data: {one: "uno", three: "3"}
EOF
k apply -f "$TMP/cm.yaml"
expect_rc 0 "second apply of the configmap"
expect_out "configmap/settings configured" "second apply of the configmap"
expect_get configmap/settings '{.metadata.labels}' '{"a":"1","c":"3"}'
expect_get configmap/settings '{.data}' '{"one":"uno","three":"3"}'

# ---- Node: labels and taints ----
cat >"$TMP/node.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {zone: a, pool: batch}
spec:
  taints:
  - {key: k1, value: v1, effect: NoSchedule}
EOF
k apply -f "$TMP/node.yaml"
expect_rc 0 "first apply of the node"
cat >"$TMP/node.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {zone: b}
spec:
  taints:
  - {key: k2, value: v2, effect: NoExecute}
EOF
k apply -f "$TMP/node.yaml"
expect_rc 0 "second apply of the node"
expect_out "node/n1 configured" "second apply of the node"
expect_get node/n1 '{.metadata.labels}' '{"zone":"b"}'
expect_get node/n1 '{.spec.taints[*].key}' "k2"
# Node conditions merge by type through the status subresource.
k patch node n1 --subresource=status --type strategic \
    -p '{"status":{"conditions":[{"type":"Ready","status":"True"},{"type":"MemoryPressure","status":"False"}]}}'
expect_rc 0 "status patch with conditions"
k patch node n1 --subresource=status --type strategic \
    -p '{"status":{"conditions":[{"type":"Ready","status":"False"}]}}'
expect_rc 0 "status patch merging a condition"
expect_get node/n1 '{.status.conditions[*].type}' "Ready MemoryPressure"
expect_get node/n1 '{.status.conditions[?(@.type=="Ready")].status}' "False"

# ---- custom resources keep 415 ----
k create -f deploy/crds/
expect_rc 0 "create CRDs"
cat >"$TMP/slo.yaml" <<'EOF'
apiVersion: slo.koordinator.sh/v1alpha1
kind: NodeSLO
metadata:
  name: n1
spec: {}
EOF
k apply -f "$TMP/slo.yaml"
expect_rc 0 "apply a custom resource"
k patch nodeslo n1 --type strategic -p '{"metadata":{"labels":{"a":"b"}}}'
expect_rc 1 "strategic patch of a custom resource"
expect_out 'strategic merge patch is not supported for custom resources' "strategic patch of a custom resource"
# The CustomResourceDefinition object itself is built in: strategic merge patches apply (a small
# CRD: updating one recompiles its schema, slow for the big ones under sanitizers).
cat >"$TMP/crd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
EOF
k apply -f "$TMP/crd.yaml"
expect_rc 0 "apply a small CRD"
k patch crd widgets.example.com --type strategic -p '{"metadata":{"labels":{"smp":"yes"}}}'
expect_rc 0 "strategic patch of a CRD object"
expect_get crd/widgets.example.com '{.metadata.labels.smp}' "yes"
# kubectl apply sends merge patches for custom resources.
cat >"$TMP/slo.yaml" <<'EOF'
apiVersion: slo.koordinator.sh/v1alpha1
kind: NodeSLO
metadata:
  name: n1
  labels: {applied: "yes"}
spec: {}
EOF
k apply -f "$TMP/slo.yaml"
expect_rc 0 "second apply of a custom resource"
expect_get nodeslo/n1 '{.metadata.labels.applied}' "yes"

kill "$pid"
wait "$pid" 2>/dev/null || true
finish
