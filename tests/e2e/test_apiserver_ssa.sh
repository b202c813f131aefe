#!/bin/bash
# Server-side apply in koord apiserver, driven by the real kubectl (`kubectl apply
# --server-side`, as Flux and Argo CD apply): a ConfigMap, a Deployment, a koord NodeSLO and an
# object of a CRD with x-kubernetes-list-type map (composite keys, a defaulted key) and set lists
# are applied twice with changes (what the manifest drops disappears), a Service's ports keyed by
# port and protocol; a second manager
# (--field-manager other) changing an owned field gets the conflict naming the field and the
# owner; --force-conflicts takes it; `kubectl get --show-managed-fields` shows the entries;
# Update entries name kubectl's managers (kubectl-client-side-apply, kubectl-edit, a scale's
# subresource), and a client-side applied object moves to server-side apply as kubectl migrates
# it.
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"
command -v kubectl >/dev/null || { echo "kubectl not installed; skipping"; exit 0; }

# get KIND/NAME JSONPATH WANT: the stored object's field, compared exactly.
expect_get() {
    k get "$1" -o "jsonpath=$2"
    expect_rc 0 "get $1 $2"
    [ "$(cat "$TMP/out")" = "$3" ] || fail "get $1 $2: '$(cat "$TMP/out")', want '$3'"
}
# managers KIND/NAME: "manager/operation[/subresource]" of each managedFields entry, one a line.
managers() {
    k get "$1" -o json --show-managed-fields
    expect_rc 0 "get $1"
    python3 -c 'import json,sys
for e in json.load(open(sys.argv[1]))["metadata"].get("managedFields", []):
    print("/".join(x for x in (e["manager"], e["operation"], e.get("subresource", "")) if x))' \
        "$TMP/out" >"$TMP/managers"
}
expect_managers() {
    managers "$1"
    [ "$(cat "$TMP/managers")" = "$2" ] || fail "managers of $1: '$(cat "$TMP/managers")', want '$2'"
}
# fields KIND/NAME MANAGER: that manager's fieldsV1 as compact JSON.
expect_fields() {
    k get "$1" -o json --show-managed-fields
    expect_rc 0 "get $1"
    got=$(python3 -c 'import json,sys
for e in json.load(open(sys.argv[1]))["metadata"]["managedFields"]:
    if e["manager"] == sys.argv[2] and e["operation"] == "Apply":
        print(json.dumps(e["fieldsV1"], sort_keys=True, separators=(",", ":")))' "$TMP/out" "$2")
    [ "$got" = "$3" ] || fail "fields of $2 on $1: '$got', want '$3'"
}

start_apiserver "$TMP/data"
k apply -f deploy/crds/
expect_rc 0 "apply the CRDs"

# ---- ConfigMap ----
cat >"$TMP/cm.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: default
  labels: {app: web, tier: front}
data:
  a: "1"
  b: "2"
EOF
k apply --server-side -f "$TMP/cm.yaml"
expect_rc 0 "first server-side apply of the ConfigMap"
expect_out "configmap/cfg serverside-applied" "first server-side apply of the ConfigMap"
expect_managers configmap/cfg "kubectl/Apply"
expect_fields configmap/cfg kubectl \
    '{"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:app":{},"f:tier":{}}}}'
# Second apply: b and the tier label dropped, c added.
sed -e 's/  b: "2"/  c: "3"/' -e 's/, tier: front//' "$TMP/cm.yaml" >"$TMP/cm2.yaml"
k apply --server-side -f "$TMP/cm2.yaml"
expect_rc 0 "second server-side apply of the ConfigMap"
expect_get configmap/cfg '{.data}' '{"a":"1","c":"3"}'
expect_get configmap/cfg '{.metadata.labels}' '{"app":"web"}'
# A server-side dry run changes nothing.
sed 's/  a: "1"/  a: "5"/' "$TMP/cm2.yaml" >"$TMP/cm-dry.yaml"
k apply --server-side --dry-run=server -f "$TMP/cm-dry.yaml"
expect_rc 0 "dry-run apply"
expect_out "serverside-applied (server dry run)" "dry-run apply"
expect_get configmap/cfg '{.data.a}' "1"
# Another manager setting a to another value: the conflict names the field and its owner.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: default\ndata:\n  a: "9"\n  d: "4"\n' >"$TMP/other.yaml"
k apply --server-side --field-manager other -f "$TMP/other.yaml"
expect_rc 1 "conflicting apply"
expect_out 'Apply failed with 1 conflict: conflict with "kubectl": .data.a' "conflicting apply"
expect_get configmap/cfg '{.data}' '{"a":"1","c":"3"}'
k apply --server-side --field-manager other --force-conflicts -f "$TMP/other.yaml"
expect_rc 0 "forced apply"
expect_get configmap/cfg '{.data}' '{"a":"9","c":"3","d":"4"}'
expect_managers configmap/cfg "kubectl/Apply
other/Apply"
expect_fields configmap/cfg kubectl '{"f:data":{"f:c":{}},"f:metadata":{"f:labels":{"f:app":{}}}}'
expect_fields configmap/cfg other '{"f:data":{"f:a":{},"f:d":{}}}'
k get configmap cfg -o yaml --show-managed-fields
expect_out "manager: other" "get --show-managed-fields"
expect_out "operation: Apply" "get --show-managed-fields"
expect_out "fieldsType: FieldsV1" "get --show-managed-fields"
# kubectl hides them otherwise.
k get configmap cfg -o yaml
grep -q managedFields "$TMP/out" && fail "get -o yaml shows managedFields without --show-managed-fields"
# kubectl's first manager drops a (no longer its own) and c: c goes, a stays with other.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: default\n  labels: {app: web}\n' >"$TMP/cm3.yaml"
k apply --server-side -f "$TMP/cm3.yaml"
expect_rc 0 "apply dropping c"
expect_get configmap/cfg '{.data}' '{"a":"9","d":"4"}'
# kubectl edit records its manager.
printf '#!/bin/sh\nsed -i "s/^  a: \\"9\\"/  a: \\"10\\"/" "$1"\n' >"$TMP/editor"
chmod +x "$TMP/editor"
EDITOR="$TMP/editor" k edit configmap cfg
expect_rc 0 "kubectl edit"
expect_managers configmap/cfg "kubectl/Apply
other/Apply
kubectl-edit/Update"
k apply --server-side --field-manager other -f "$TMP/other.yaml"
expect_rc 1 "apply over kubectl edit"
expect_out 'conflict with "kubectl-edit" using v1: .data.a' "apply over kubectl edit"

# ---- Deployment ----
cat >"$TMP/dep.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx:1.25
        ports:
        - containerPort: 80
      - name: side
        image: busybox:1.36
EOF
k apply --server-side -f "$TMP/dep.yaml"
expect_rc 0 "server-side apply of the Deployment"
expect_out "deployment.apps/web serverside-applied" "server-side apply of the Deployment"
# Containers by name, ports by port and protocol (defaulted TCP), the selector atomic.
k get deployment web -o json --show-managed-fields
expect_out '"k:{\"containerPort\":80,\"protocol\":\"TCP\"}"' "Deployment field set"
expect_out '"f:selector": {}' "Deployment field set"
# The sidecar dropped, the image changed: the sidecar goes.
sed -e '/- name: side/,$d' -e 's/nginx:1.25/nginx:1.26/' "$TMP/dep.yaml" >"$TMP/dep2.yaml"
k apply --server-side -f "$TMP/dep2.yaml"
expect_rc 0 "second apply of the Deployment"
expect_get deployment/web '{.spec.template.spec.containers[*].name} {.spec.template.spec.containers[*].image}' \
    "app nginx:1.26"
# kubectl scale writes replicas through /scale: an Update entry with that subresource, which
# the next apply of replicas conflicts with, as in kube.
k scale deployment web --replicas=3
expect_rc 0 "kubectl scale"
expect_managers deployment/web "kubectl/Apply
kubectl/Update/scale"
k apply --server-side -f "$TMP/dep2.yaml"
expect_rc 1 "apply over a scale"
expect_out 'conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas' \
    "apply over a scale"
k apply --server-side --force-conflicts -f "$TMP/dep2.yaml"
expect_rc 0 "forced apply over a scale"
expect_get deployment/web '{.spec.replicas}' "2"
expect_managers deployment/web "kubectl/Apply"

# ---- Service: ports keyed by port and protocol, the selector atomic ----
cat >"$TMP/svc.yaml" <<'EOF'
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: 8080}
  - {name: dns, port: 53, protocol: UDP}
EOF
k apply --server-side -f "$TMP/svc.yaml"
expect_rc 0 "server-side apply of a Service"
expect_fields service/web kubectl '{"f:spec":{"f:ports":{"k:{\"port\":53,\"protocol\":\"UDP\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{}},"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{},"f:targetPort":{}}},"f:selector":{}}}'

# ---- NodeSLO (a koord CRD) ----
cat >"$TMP/slo.yaml" <<'EOF'
apiVersion: slo.koordinator.sh/v1alpha1
kind: NodeSLO
metadata:
  name: node-a
spec:
  resourceUsedThresholdWithBE:
    enable: true
    cpuSuppressThresholdPercent: 65
    memoryEvictThresholdPercent: 70
EOF
k apply --server-side -f "$TMP/slo.yaml"
expect_rc 0 "server-side apply of a NodeSLO"
sed -e 's/65/60/' -e '/memoryEvict/d' "$TMP/slo.yaml" >"$TMP/slo2.yaml"
k apply --server-side -f "$TMP/slo2.yaml"
expect_rc 0 "second apply of the NodeSLO"
expect_get nodeslo/node-a '{.spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent}' "60"
expect_get nodeslo/node-a '{.spec.resourceUsedThresholdWithBE.memoryEvictThresholdPercent}' ""
printf 'apiVersion: slo.koordinator.sh/v1alpha1\nkind: NodeSLO\nmetadata:\n  name: node-a\nspec:\n  resourceUsedThresholdWithBE:\n    cpuSuppressThresholdPercent: 50\n' >"$TMP/slo3.yaml"
k apply --server-side --field-manager other -f "$TMP/slo3.yaml"
expect_rc 1 "conflicting apply of the NodeSLO"
expect_out 'conflict with "kubectl": .spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent' \
    "conflicting apply of the NodeSLO"
k apply --server-side --field-manager other --force-conflicts -f "$TMP/slo3.yaml"
expect_rc 0 "forced apply of the NodeSLO"
expect_get nodeslo/node-a '{.spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent}' "50"
expect_fields nodeslo/node-a kubectl '{"f:spec":{"f:resourceUsedThresholdWithBE":{"f:enable":{}}}}'

# ---- list types from a CRD schema ----
cat >"$TMP/crd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [port, protocol]
                items:
                  type: object
                  required: [port]
                  properties:
                    port: {type: integer}
                    protocol: {type: string, default: TCP}
                    name: {type: string}
              tags:
                type: array
                x-kubernetes-list-type: set
                items: {type: string}
              args:
                type: array
                items: {type: string}
EOF
k apply -f "$TMP/crd.yaml"
expect_rc 0 "create the Widget CRD"
k wait --for=condition=Established crd/widgets.example.com --timeout=20s
cat >"$TMP/w.yaml" <<'EOF'
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: default}
spec:
  ports:
  - {port: 80, name: http}
  - {port: 53, protocol: UDP}
  tags: [a, b]
  args: [one, two]
EOF
k apply --server-side -f "$TMP/w.yaml"
expect_rc 0 "apply a Widget"
# Another manager adds a port and a tag: items merge by key and by value.
printf 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: default}\nspec:\n  ports:\n  - {port: 8080}\n  tags: [c]\n' >"$TMP/w2.yaml"
k apply --server-side --field-manager other -f "$TMP/w2.yaml"
expect_rc 0 "apply a Widget by another manager"
expect_get widget/w1 '{.spec.ports[*].port} {.spec.tags} {.spec.args}' '80 53 8080 ["a","b","c"] ["one","two"]'
expect_fields widget/w1 other '{"f:spec":{"f:ports":{"k:{\"port\":8080,\"protocol\":\"TCP\"}":{".":{},"f:port":{}}},"f:tags":{"v:\"c\"":{}}}}'
# The same item (port 80, protocol defaulted) with another name: a conflict on that field.
printf 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: default}\nspec:\n  ports:\n  - {port: 8080}\n  - {port: 80, protocol: TCP, name: web}\n  tags: [c]\n' >"$TMP/w3.yaml"
k apply --server-side --field-manager other -f "$TMP/w3.yaml"
expect_rc 1 "conflicting Widget apply"
expect_out 'conflict with "kubectl": .spec.ports[port=80,protocol="TCP"].name' "conflicting Widget apply"
# kubectl stops applying port 53 and tag a: they go; the atomic args list is replaced.
printf 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: default}\nspec:\n  ports:\n  - {port: 80, name: http}\n  tags: [b]\n  args: [three]\n' >"$TMP/w4.yaml"
k apply --server-side -f "$TMP/w4.yaml"
expect_rc 0 "apply dropping list items"
expect_get widget/w1 '{.spec.ports[*].port} {.spec.tags} {.spec.args}' '80 8080 ["b","c"] ["three"]'

# ---- client-side apply, then server-side apply ----
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: csa\n  namespace: default\ndata:\n  a: "1"\n' >"$TMP/csa.yaml"
k apply -f "$TMP/csa.yaml"
expect_rc 0 "client-side apply"
expect_managers configmap/csa "kubectl-client-side-apply/Update"
k apply --server-side -f "$TMP/csa.yaml"
expect_rc 0 "server-side apply after client-side apply"
managers configmap/csa
grep -q "kubectl-client-side-apply" "$TMP/managers" &&
    fail "kubectl's migration left the client-side manager: $(cat "$TMP/managers")"
grep -qx "kubectl/Apply" "$TMP/managers" || fail "no kubectl/Apply entry: $(cat "$TMP/managers")"

# ---- refusals ----
k apply --server-side --field-manager "" -f "$TMP/csa.yaml"
expect_rc 1 "apply without a field manager"

kill "$pid"
wait "$pid" 2>/dev/null || true
finish
