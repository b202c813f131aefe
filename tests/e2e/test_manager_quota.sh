#!/bin/bash
# koord manager's ElasticQuotaProfile controller (manager-behaviour.md 8) against koord
# apiserver, driven by kubectl: a profile applied yields its ElasticQuota with
# min = resourceRatio x the allocatable of the nodes its nodeSelector picks, the profile gets
# its tree id, and a node added to the pool shows in min at the next 10 s re-sync.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 0; }

start_apiserver "$TMP/data"
mpid=""
trap 'kill -9 $pid $mpid 2>/dev/null || true; rm -rf "$TMP"' EXIT
k apply -f "$KOORD_SOURCE_DIR/deploy/crds/"
expect_rc 0 "apply CRDs"
printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}}' >"$TMP/ns.json"
k create -f "$TMP/ns.json"
expect_rc 0 "create namespace"

# node NAME POOL CPU MEMORY: a Ready node.
node() {
    cat <<EOF
apiVersion: v1
kind: Node
metadata: {name: $1, labels: {pool: $2}}
status:
  allocatable: {cpu: "$3", memory: $4, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
EOF
}
node n1 gpu 32 128Gi >"$TMP/n1.yaml"
node n2 gpu 16 64Gi >"$TMP/n2.yaml"
node n3 cpu 8 16Gi >"$TMP/n3.yaml"
k create -f "$TMP/n1.yaml" -f "$TMP/n2.yaml" -f "$TMP/n3.yaml"
expect_rc 0 "create nodes"

"$KOORD" manager --listen 127.0.0.1:0 --webhook-listen 127.0.0.1:0 --ready-file "$TMP/mready" --cert-dir "$TMP/m" \
    --client-ca-file "$TMP/data/pki/ca.crt" --leader-election-lease-duration 3 \
    --leader-election-renew-deadline 2 --leader-election-retry-period 1 \
    >>"$TMP/manager.log" 2>&1 &
mpid=$!
wait_for "manager listening" test -s "$TMP/mready"
maddr=$(cat "$TMP/mready")
wait_for "manager ready" curl -sfk "https://$maddr/readyz"

cat >"$TMP/eqp.yaml" <<'EOF'
apiVersion: quota.koordinator.sh/v1alpha1
kind: ElasticQuotaProfile
metadata: {name: gpu-pool, namespace: team-a}
spec:
  quotaName: gpu-root
  resourceRatio: "0.9"
  nodeSelector: {matchLabels: {pool: gpu}}
EOF
k apply -f "$TMP/eqp.yaml"
expect_rc 0 "apply profile"
expect_out "elasticquotaprofile.quota.koordinator.sh/gpu-pool created" "apply profile"

# min = 0.9 x (32 + 16) cores = 43200m, 0.9 x 192Gi = 185542587187 bytes (truncated:
# 206158430208 x 0.9 = 185542587187.2); max is upstream's constant.
min_is() {
    [ "$(kubectl get elasticquota -n team-a gpu-root -o jsonpath='{.spec.min.cpu} {.spec.min.memory}')" = "$1" ]
}
wait_for "ElasticQuota gpu-root with min = 0.9 x allocatable" min_is "43200m 185542587187"
k get elasticquota -n team-a gpu-root -o jsonpath='{.spec.max.cpu} {.metadata.labels.quota\.scheduling\.koordinator\.sh/profile} {.metadata.labels.quota\.scheduling\.koordinator\.sh/is-root} {.metadata.labels.quota\.scheduling\.koordinator\.sh/parent}'
expect_out "4611686018427387 gpu-pool true koordinator-root-quota" "quota labels"
# The profile carries its tree id, FNV-1a 64 of "team-a/gpu-pool"; so does the quota.
# fnv1a64 STRING: in bash's 64-bit arithmetic, which wraps as uint64 multiplication does.
fnv1a64() {
    local h=-3750763034362895579 i c # 14695981039346656037 as int64
    for ((i = 0; i < ${#1}; i++)); do
        printf -v c '%d' "'${1:i:1}"
        h=$(((h ^ c) * 1099511628211))
    done
    printf '%u' "$h"
}
k get elasticquotaprofile -n team-a gpu-pool -o jsonpath='{.metadata.labels.quota\.scheduling\.koordinator\.sh/tree-id}'
expect_out "$(fnv1a64 team-a/gpu-pool)" "profile tree id"
k get eqp -n team-a
expect_out "gpu-pool" "short name eqp"

# A third node joins the pool: 0.9 x 40 cores = 36000m more, seen at the next re-sync.
node n4 gpu 40 64Gi >"$TMP/n4.yaml"
k create -f "$TMP/n4.yaml"
expect_rc 0 "create n4"
wait_for "min follows the new node" min_is "79200m 247390116249"

# Deleting the profile leaves the quota.
k delete elasticquotaprofile -n team-a gpu-pool
expect_rc 0 "delete profile"
k get elasticquota -n team-a gpu-root
expect_rc 0 "quota kept after the profile is gone"

run curl -sfk "https://$maddr/metrics"
expect_out 'koord_manager_reconciles_total{controller="quotaprofile"}' "/metrics"
kill -TERM "$mpid"
wait "$mpid" || fail "manager exit status $?"
mpid=""
finish
