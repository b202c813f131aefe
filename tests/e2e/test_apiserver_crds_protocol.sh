#!/bin/bash
# koord apiserver with CustomResourceDefinitions written by hand and the protocol details
# clients notice (issue 17 sections 2 and 6), driven by kubectl as a user types it and by curl
# where kubectl cannot show the detail:
#  - a CRD whose schema lists only spec: objects keep their name (never pruned), metadata is
#    validated as ObjectMeta; names default; kubectl wait --for=condition=Established returns;
#  - two versions with conversion None: the same object read at either version;
#  - additionalPrinterColumns in kubectl get, priority 1 columns only with -o wide;
#    x-kubernetes-list-type set duplicates refused; the Warning about CEL rules;
#  - /version/, /healthz/ping, ?verbose, a %00 in the path refused, a BOOKMARK before
#    timeoutSeconds, remainingItemCount, duplicate keys warned, an unsupported fieldValidation
#    refused, and the Table columns kubectl shows for built-ins. (A watch from a compacted
#    revision needs 10000 writes here; tests/apiserver/test_apiserver.c checks its ERROR event
#    on a store with a short history.)
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"
command -v kubectl >/dev/null || skip "kubectl not installed"
command -v curl >/dev/null || skip "curl not installed"

data="$TMP/data"
start_apiserver "$data"
kc() { run curl -sS --max-time 20 --cacert "$data/pki/ca.crt" --cert "$data/pki/admin.crt" \
    --key "$data/pki/admin.key" "$@"; }

# ---- section 2: a CRD as people write it ----
cat >"$TMP/crd.yaml" <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    kind: Widget
    shortNames: [wd]
  versions:
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              owner: {type: string}
              zones:
                type: array
                x-kubernetes-list-type: set
                items: {type: string}
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Owner, type: string, jsonPath: .spec.owner, priority: 1}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-validations:
        - rule: "self.spec.size > 0"
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              owner: {type: string}
              zones:
                type: array
                x-kubernetes-list-type: set
                items: {type: string}
YAML
k apply -f "$TMP/crd.yaml"
expect_rc 0 "apply a hand-written CRD"
expect_out "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created" "apply CRD"
expect_out "x-kubernetes-validations rules are not enforced" "warning about CEL rules"
k wait --for=condition=Established crd/widgets.example.com --timeout=20s
expect_rc 0 "kubectl wait Established"
expect_out "condition met" "kubectl wait Established"
k get crd widgets.example.com -o jsonpath='{.spec.names.singular}/{.spec.names.listKind}/{.status.acceptedNames.kind}/{.status.storedVersions}'
expect_out 'widget/WidgetList/Widget/["v1"]' "names defaults and status"
k get crd
expect_out "CREATED AT" "CRD table header"
expect_out "widgets.example.com" "CRD table row"

cat >"$TMP/w1.yaml" <<'YAML'
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
  labels: {app: demo}
spec: {size: 3, owner: ops, zones: [a, b]}
YAML
k apply -f "$TMP/w1.yaml"
expect_rc 0 "create a widget"
k get widget w1 -o jsonpath='{.metadata.name}/{.metadata.namespace}/{.metadata.labels.app}/{.kind}'
expect_rc 0 "get the widget by name"
expect_out "w1/default/demo/Widget" "the widget keeps its metadata"
# At the other served version: the same object with that version's apiVersion.
k get widgets.v1beta1.example.com w1 -o jsonpath='{.apiVersion}/{.spec.size}'
expect_out "example.com/v1beta1/3" "read at v1beta1"
k get wd w1 -o jsonpath='{.apiVersion}'
expect_out "example.com/v1" "read at the preferred version"
# Printer columns: Owner (priority 1) only with -o wide.
k get widgets
expect_out "SIZE" "printer column"
! grep -q OWNER "$TMP/out" || fail "a priority 1 column without -o wide"
k get widgets -o wide
expect_out "OWNER" "priority 1 column with -o wide"
expect_out "ops" "priority 1 cell with -o wide"
# metadata is ObjectMeta; a set refuses duplicates.
printf 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w2\n  labels: {"bad key!": x}\n' >"$TMP/w2.yaml"
k apply -f "$TMP/w2.yaml"
expect_rc 1 "a bad label"
expect_out "metadata.labels" "a bad label"
printf 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w3}\nspec: {zones: [a, a]}\n' >"$TMP/w3.yaml"
k apply -f "$TMP/w3.yaml"
expect_rc 1 "duplicates in a set"
expect_out 'spec.zones[1]: Duplicate value: "a"' "duplicates in a set"

# ---- section 6: protocol details ----
kc "https://$server/version/"
for f in major minor gitVersion gitCommit gitTreeState buildDate goVersion compiler platform; do
    expect_out "\"$f\":" "/version/ field $f"
done
k version -o json
expect_out '"serverVersion"' "kubectl version"
kc "https://$server/healthz/ping"
expect_out "ok" "/healthz/ping"
kc "https://$server/livez/ping"
expect_out "ok" "/livez/ping"
kc "https://$server/readyz?verbose"
expect_out "[+]ping ok" "readyz verbose"
expect_out "readyz check passed" "readyz verbose"

k create configmap a --from-literal=k=v
expect_rc 0 "create configmap a"
kc -o /dev/null -w '%{http_code}\n' "https://$server/api/v1/namespaces/default/configmaps/a%00b"
expect_out "400" "a NUL in the path"
kc -o /dev/null -w '%{http_code}\n' -X DELETE "https://$server/api/v1/namespaces/default/configmaps/a%00b"
expect_out "400" "delete with a NUL in the path"
k get configmap a -o name
expect_out "configmap/a" "configmap a untouched"

# A bookmark shortly before timeoutSeconds ends.
kc "https://$server/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion=$(kubectl get configmap a -o jsonpath='{.metadata.resourceVersion}')"
expect_out '"type":"BOOKMARK"' "bookmark before the timeout"
# remainingItemCount on unfiltered pages; limit=0 is no limit.
for i in 1 2 3; do k create configmap "page-$i"; done
kc "https://$server/api/v1/namespaces/default/configmaps?limit=2"
expect_out '"remainingItemCount":' "remainingItemCount"
kc "https://$server/api/v1/namespaces/default/configmaps?limit=0"
! grep -q '"continue"' "$TMP/out" || fail "limit=0 paged"
# Duplicate keys: a warning (kubectl prints it); an unsupported fieldValidation is refused.
kc -D "$TMP/headers" -H 'Content-Type: application/json' -X POST \
    -d '{"metadata":{"name":"dup","name":"dup2"}}' "https://$server/api/v1/namespaces/default/configmaps"
expect_out '"name":"dup2"' "duplicate keys: the last wins"
run cat "$TMP/headers"
expect_out 'duplicate field \"metadata.name\"' "duplicate keys warned"
kc -H 'Content-Type: application/json' -X POST -d '{"metadata":{"name":"x"}}' \
    "https://$server/api/v1/namespaces/default/configmaps?fieldValidation=Bogus"
expect_out 'fieldValidation: Unsupported value: \"Bogus\"' "unsupported fieldValidation"

# Table columns of built-in kinds as kubectl shows them against kube.
k get configmap a
expect_out "DATA" "configmap columns"
k get namespaces
expect_out "STATUS" "namespace columns"
printf '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"},"spec":{"holderIdentity":"me"}}' >"$TMP/lease.json"
k create -f "$TMP/lease.json"
k get leases
expect_out "HOLDER" "lease columns"
expect_out "me" "lease holder"
printf '{"apiVersion":"v1","kind":"Event","metadata":{"name":"e"},"involvedObject":{"kind":"ConfigMap","name":"a","namespace":"default"},"reason":"Tested","message":"hello","type":"Normal"}' >"$TMP/event.json"
k create -f "$TMP/event.json"
k get events
expect_out "LAST SEEN" "event columns"
expect_out "configmap/a" "event object"
expect_out "hello" "event message"
k create service clusterip web --tcp=80:8080
expect_rc 0 "create a service"
k get services
expect_out "CLUSTER-IP" "service columns"
expect_out "80/TCP" "service ports"

finish
