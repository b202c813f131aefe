#!/bin/bash
# koord apiserver enforces the ElasticQuota webhook rules of manager-behaviour.md 6.2 on its
# own (no koord-manager webhook server): a valid two-level tree is accepted and defaulted, and
# writes that would break it are refused in upstream's words, as kube-apiserver forwards a
# webhook's denial ("admission webhook "vquota.kb.io" denied the request: ...").
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 0; }

start_apiserver "$TMP/data"
k apply -f "$KOORD_SOURCE_DIR/deploy/crds/"
expect_rc 0 "apply CRDs"
printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}}' >"$TMP/ns.json"
k create -f "$TMP/ns.json"
expect_rc 0 "create namespace"

P=quota.scheduling.koordinator.sh
# quota NAME LABELS MIN_CPU MAX_CPU [MIN_MEMORY]: an ElasticQuota in namespace team.
quota() {
    cat <<EOF
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: $1
  namespace: team
  labels: {$2}
spec:
  min: {cpu: "$3", memory: ${5:-1Gi}}
  max: {cpu: "$4", memory: 8Gi}
EOF
}

# A valid tree: parent (min 10 cpu, 2Gi) with children of min 6 and 4 cpu, 1Gi each.
quota parent "$P/is-parent: 'true', $P/tree-id: t1" 10 20 2Gi >"$TMP/parent.yaml"
quota child-a "$P/parent: parent" 6 20 >"$TMP/a.yaml"
quota child-b "$P/parent: parent" 4 20 >"$TMP/b.yaml"
k create -f "$TMP/parent.yaml" -f "$TMP/a.yaml" -f "$TMP/b.yaml"
expect_rc 0 "valid tree"
expect_out "elasticquota.scheduling.sigs.k8s.io/child-b created" "valid tree"
# Defaults of the mutating webhook: the parent's tree id, shared-weight = max.
k get elasticquota -n team child-a -o jsonpath="{.metadata.labels.quota\.scheduling\.koordinator\.sh/tree-id} {.metadata.annotations.quota\.scheduling\.koordinator\.sh/shared-weight}"
expect_out 't1 {"cpu":"20","memory":"8Gi"}' "tree id and shared-weight defaulted"
k get elasticquota -n team parent -o jsonpath="{.metadata.labels.quota\.scheduling\.koordinator\.sh/parent}"
expect_out "koordinator-root-quota" "parent defaulted to the root"

# The children's min already fill the parent's: one more is refused.
quota child-c "$P/parent: parent" 1 20 >"$TMP/c.yaml"
k create -f "$TMP/c.yaml"
expect_rc 1 "min sum over the parent's"
expect_out 'admission webhook "vquota.kb.io" denied the request: checkMinQuotaSum allChildren SumMinQuota > parentMinQuota, parent: parent' "min sum"
# A parent that does not exist, a parent that is not a parent.
quota child-d "$P/parent: ghost, $P/tree-id: t1" 1 20 >"$TMP/d.yaml"
k create -f "$TMP/d.yaml"
expect_rc 1 "missing parent"
expect_out 'denied the request: child-d has parentName ghost but not find parentInfo in quotaInfoMap' "missing parent"
# min above max.
quota greedy "" 30 20 >"$TMP/g.yaml"
k create -f "$TMP/g.yaml"
expect_rc 1 "min above max"
expect_out 'denied the request: greedy min :map[cpu:30 memory:1Gi] > max,map[cpu:20 memory:8Gi]' "min above max"
# Lowering the parent's min under its children's sum.
k patch elasticquota -n team parent --type merge -p '{"spec":{"min":{"cpu":"9"}}}'
expect_rc 1 "parent min under the children's"
expect_out 'denied the request: checkMinQuotaSum allChildrn SumMinQuota > MinQuota, parent: parent' "parent min"
# is-parent cannot be dropped while children exist.
k label elasticquota -n team parent "$P/is-parent=false" --overwrite
expect_rc 1 "is-parent false with children"
expect_out 'denied the request: IsParent is forbidden modify now, quotaName:parent has child quotas' "is-parent"
# An update that leaves the tree alone passes.
k annotate elasticquota -n team parent note=hello
expect_rc 0 "annotation only"
# Deleting a parent with children, or a reserved quota name, is refused; a leaf goes.
k delete elasticquota -n team parent
expect_rc 1 "delete parent with children"
expect_out 'denied the request: delete quota failed, quotaparent has child quota' "delete parent"
k delete elasticquota -n team child-b
expect_rc 0 "delete leaf"
k get elasticquota -n team parent
expect_rc 0 "parent still there"
quota koordinator-default-quota "" 0 1 >"$TMP/def.yaml"
k create -f "$TMP/def.yaml"
expect_rc 0 "create the default quota"
k delete elasticquota -n team koordinator-default-quota
expect_rc 1 "delete the default quota"
expect_out 'denied the request: can not delete quotaGroup :koordinator-default-quota' "delete default quota"
finish
