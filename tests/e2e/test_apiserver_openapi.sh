#!/bin/bash
# OpenAPI in koord apiserver, read by the real kubectl: `kubectl explain` of a built-in kind
# (pod.spec.containers: the Container fields, name required, resources a ResourceRequirements),
# of every served resource with --recursive (every $ref resolves), and of a Koordinator CRD
# (nodeslo.spec), from /openapi/v3 and from /openapi/v2; `kubectl apply -f` of a `kind: List`
# file, which kubectl validates client-side against /openapi/v2 fetched as protobuf (an unknown
# field in an item refused naming the field, nothing created); strict validation of a single
# object and of a custom resource (left to the server, which names the field); and a second
# `kubectl apply` of a Deployment whose strategic merge patch kubectl computes from the v3
# schemas' merge keys (only the changed container sent) without a warning.
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"
command -v kubectl >/dev/null || skip "kubectl not installed"

start_apiserver "$TMP/data"
k apply -f deploy/crds/
expect_rc 0 "apply the Koordinator CRDs"

# ---- kubectl explain: built-in kinds ----
k explain pod.spec.containers
expect_rc 0 "explain pod.spec.containers"
expect_out "FIELD: containers <[]Container>" "explain pod.spec.containers"
expect_out "image	<string>" "explain pod.spec.containers"
grep -qE '^  name	<string> -required-' "$TMP/out" ||
    fail "explain pod.spec.containers: name not required; output:$(printf '\n'; cat "$TMP/out")"
k explain pod.spec.containers.resources
expect_rc 0 "explain pod.spec.containers.resources"
expect_out "<ResourceRequirements>" "explain resources"
expect_out "limits	<map[string]Quantity>" "explain resources"
k explain deployment.spec
expect_rc 0 "explain deployment.spec"
expect_out "replicas	<integer>" "explain deployment.spec"
# The same from /openapi/v2 (kubectl parses the whole protobuf document for it).
k explain pods.spec.containers --output=plaintext-openapiv2
expect_rc 0 "explain from /openapi/v2"
grep -qE '^   name	<string> -required-' "$TMP/out" ||
    fail "explain from /openapi/v2: name not required; output:$(printf '\n'; cat "$TMP/out")"
k explain pod.spec.nosuchfield
[ "$rc" -ne 0 ] || fail "explain of a field that does not exist succeeded"
expect_out 'field "nosuchfield" does not exist' "explain pod.spec.nosuchfield"

# Every served resource explains, all its fields followed (every $ref resolves).
k api-resources --no-headers -o name
expect_rc 0 "api-resources"
resources=$(cat "$TMP/out")
k api-versions
expect_rc 0 "api-versions"
versions=$(cat "$TMP/out")
for r in $resources; do
    if [ "${r#*.}" != "$r" ]; then
        # kubectl explain reads "events.events.k8s.io" as field paths: name the group-version.
        group=${r#*.}
        gv=$(echo "$versions" | grep -m1 "^$group/")
        k explain "${r%%.*}" --api-version="$gv" --recursive
    else
        k explain "$r" --recursive
    fi
    expect_rc 0 "explain $r --recursive"
done
[ "$(echo "$resources" | wc -w)" -gt 30 ] || fail "only $(echo "$resources" | wc -w) resources"

# ---- kubectl explain: a custom resource from its CRD schema ----
k explain nodeslo.spec
expect_rc 0 "explain nodeslo.spec"
expect_out "GROUP:      slo.koordinator.sh" "explain nodeslo.spec"
expect_out "KIND:       NodeSLO" "explain nodeslo.spec"
expect_out "resourceUsedThresholdWithBE	<Object>" "explain nodeslo.spec"
expect_out "CPU burst policy." "explain nodeslo.spec: the CRD's descriptions"
k explain nodeslo.spec.resourceUsedThresholdWithBE.cpuSuppressPolicy
expect_rc 0 "explain a nested NodeSLO field"
expect_out "FIELD: cpuSuppressPolicy <string>" "explain cpuSuppressPolicy"

# ---- kubectl apply -f of a kind: List file: client-side validation against /openapi/v2 ----
cat >"$TMP/list.yaml" <<'EOF'
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: listed, namespace: default}
  data: {a: "1"}
- apiVersion: v1
  kind: Pod
  metadata: {name: listed, namespace: default}
  spec:
    containers:
    - name: c
      image: nginx
EOF
run kubectl --request-timeout=20s apply -f "$TMP/list.yaml" -v=6
expect_rc 0 "apply a List"
expect_out "configmap/listed created" "apply a List"
expect_out "pod/listed created" "apply a List"
expect_out "/openapi/v2" "apply a List fetches /openapi/v2"
k get configmap listed -o jsonpath='{.data.a}'
expect_rc 0 "get the listed ConfigMap"
[ "$(cat "$TMP/out")" = 1 ] || fail "listed ConfigMap data.a: '$(cat "$TMP/out")', want 1"

cat >"$TMP/badlist.yaml" <<'EOF'
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: badlisted, namespace: default}
  data: {a: "1"}
  bogusField: 1
EOF
k apply -f "$TMP/badlist.yaml" --validate=strict
[ "$rc" -ne 0 ] || fail "a List item with an unknown field was applied"
expect_out 'unknown field "bogusField" in io.k8s.api.core.v1.ConfigMap' "client-side validation"
k get configmap badlisted
[ "$rc" -ne 0 ] || fail "the refused List item was created"
k apply -f "$TMP/badlist.yaml" --validate=false
expect_rc 0 "apply --validate=false of the List"

# ---- strict validation of one object: the server names the field ----
cat >"$TMP/badpod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: badpod, namespace: default}
spec:
  containers:
  - name: c
    image: nginx
    imagePolicy: Always
EOF
k apply -f "$TMP/badpod.yaml" --validate=strict
[ "$rc" -ne 0 ] || fail "a Pod with an unknown field was applied"
expect_out 'unknown field "spec.containers[0].imagePolicy"' "strict validation of a Pod"

printf 'apiVersion: slo.koordinator.sh/v1alpha1\nkind: NodeSLO\nmetadata: {name: n1}\nspec:\n  bogus: 1\n' \
    >"$TMP/badslo.yaml"
k apply -f "$TMP/badslo.yaml" --validate=strict
[ "$rc" -ne 0 ] || fail "a NodeSLO with an unknown field was applied"
expect_out 'unknown field "spec.bogus"' "strict validation of a custom resource"

# ---- a second apply: kubectl's strategic merge patch from the v3 schemas ----
cat >"$TMP/deploy.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        env: [{name: A, value: "1"}]
      - name: side
        image: busybox
EOF
k apply -f "$TMP/deploy.yaml"
expect_rc 0 "apply a Deployment"
# A container another actor added: a merge by name keeps it, replacing the list would not.
k patch deployment web --type=json \
    -p '[{"op":"add","path":"/spec/template/spec/containers/-","value":{"name":"extra","image":"busybox"}}]'
expect_rc 0 "add a container out of band"
sed -i 's/nginx:1.25/nginx:1.27/' "$TMP/deploy.yaml"
run kubectl --request-timeout=20s apply -f "$TMP/deploy.yaml" -v=8
expect_rc 0 "apply the Deployment again"
expect_out "deployment.apps/web configured" "second apply"
# kubectl merged the containers by name (only the changed one sent), as the v3 schema's
# x-kubernetes-patch-merge-key told it, rather than sending the whole list.
expect_out '\"$setElementOrder/containers\":[{\"name\":\"web\"},{\"name\":\"side\"}],\"containers\":[{\"image\":\"nginx:1.27\",\"name\":\"web\"}]' \
    "second apply: strategic merge patch by container name"
if grep -q "error calculating patch" "$TMP/out"; then
    fail "second apply could not use the OpenAPI schemas: $(grep "error calculating patch" "$TMP/out")"
fi
k get deployment web -o 'jsonpath={range .spec.template.spec.containers[*]}{.name}={.image} {end}'
expect_rc 0 "get the Deployment"
[ "$(cat "$TMP/out")" = "web=nginx:1.27 side=busybox extra=busybox " ] ||
    fail "Deployment containers '$(cat "$TMP/out")', want 'web=nginx:1.27 side=busybox extra=busybox '"

finish
