#!/bin/bash
# Strategic merge patch in koord apiserver, driven by the real kubectl: a second `kubectl apply`
# of a Pod (images changed, a toleration added, a label dropped; other spec changes refused as
# kube-apiserver refuses them), of a Service (ports merged by port), of a ConfigMap and of a
# Node (labels dropped from the manifest disappear from the object); `kubectl patch --type
# strategic` adding a toleration, patching one container by name and deleting a port with
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
# A pod's spec may only change in images, added tolerations and a few more fields (kube-apiserver's
# ValidatePodUpdate): the second apply changes exactly those, and drops a label.
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

sed -e 's/nginx:1.25/nginx:1.26/' -e 's/busybox:1.36/busybox:1.37/' -e 's/, tier: front//' \
    "$TMP/pod.yaml" >"$TMP/pod2.yaml"
# The server adds the not-ready/unreachable tolerations (DefaultTolerationSeconds) to a pod
# without them; the manifest names them so that applying it again has nothing to change (a
# toleration list is replaced as a whole).
printf '  tolerations:\n  - {key: dedicated, operator: Exists, effect: NoSchedule}\n' >>"$TMP/pod2.yaml"
printf '  - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}\n' >>"$TMP/pod2.yaml"
printf '  - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 300}\n' >>"$TMP/pod2.yaml"
k apply -f "$TMP/pod2.yaml"
expect_rc 0 "second apply of the pod"
expect_out "pod/web configured" "second apply of the pod"
expect_get pod/web '{.spec.containers[*].image}' "nginx:1.26 busybox:1.37"
expect_get pod/web '{.spec.containers[?(@.name=="app")].env[*].name}' "A B"
expect_get pod/web '{.spec.containers[?(@.name=="app")].ports[*].containerPort}' "80 8080"
expect_get pod/web '{.spec.tolerations[*].key}' "dedicated node.kubernetes.io/not-ready node.kubernetes.io/unreachable"
expect_get pod/web '{.metadata.labels}' '{"app":"web","other":"x"}'
expect_get pod/web '{.metadata.finalizers}' '["example.com/keep"]'
# Applying the same manifest again changes nothing.
k apply -f "$TMP/pod2.yaml"
expect_rc 0 "third apply of the pod"
expect_out "pod/web unchanged" "third apply of the pod"
# Changing anything else of the spec is refused, as kube-apiserver refuses it.
sed 's/value: "1"}/value: "9"}/' "$TMP/pod2.yaml" >"$TMP/pod3.yaml"
k apply -f "$TMP/pod3.yaml"
expect_rc 1 "apply changing an env value"
expect_out "spec: Forbidden: pod updates may not change fields other than" "apply changing an env value"

# ---- kubectl patch --type strategic ----
# tolerations are atomic: the patch's list replaces the stored one (adding to it is allowed;
# the server adds the default tolerations back).
k patch pod web --type strategic -p '{"spec":{"tolerations":[{"key":"dedicated","operator":"Exists","effect":"NoSchedule"},{"key":"gpu","operator":"Exists"}]}}'
expect_rc 0 "strategic patch adding a toleration"
expect_get pod/web '{.spec.tolerations[*].key}' "dedicated gpu node.kubernetes.io/not-ready node.kubernetes.io/unreachable"
# containers merge by name: the patch names one; the other, and the env lists, stay.
k patch pod web --type strategic -p '{"spec":{"containers":[{"name":"app","image":"nginx:1.27"}]}}'
expect_rc 0 "strategic patch of one container"
expect_get pod/web '{.spec.containers[*].image}' "nginx:1.27 busybox:1.37"
expect_get pod/web '{.spec.containers[?(@.name=="app")].env[?(@.name=="A")].value}' "1"
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
expect_get pod/web '{.spec.containers[*].name}' "app side"

# ---- Service: ports merge by port across applies; $patch: delete removes one ----
cat >"$TMP/svc.yaml" <<'EOF'
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: 8080}
  - {name: metrics, port: 9090}
EOF
k apply -f "$TMP/svc.yaml"
expect_rc 0 "first apply of the service"
cat >"$TMP/svc.yaml" <<'EOF'
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: 8081}
  - {name: grpc, port: 9000}
EOF
k apply -f "$TMP/svc.yaml"
expect_rc 0 "second apply of the service"
expect_get service/web '{.spec.ports[*].name}' "http grpc"
expect_get service/web '{.spec.ports[?(@.name=="http")].targetPort}' "8081"
k patch service web --type strategic -p '{"spec":{"ports":[{"port":9000,"$patch":"delete"}]}}'
expect_rc 0 "strategic patch deleting a port"
expect_get service/web '{.spec.ports[*].port}' "80"

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
