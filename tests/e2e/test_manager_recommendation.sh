#!/bin/bash
# koord manager's Recommendation controller (docs/recommendation.md) against koord apiserver,
# driven by kubectl and koord report: two pods selected by a Recommendation's podSelector, five
# NodeMetric reports of known usage through the manager's NodeMetric API, and the status must
# converge to the VPA estimate computed here by hand from the constants (first bucket 0.01 core
# / 1e7 bytes, ratio 1.05, p90 = the end of the bucket holding the usage, x 1.15 margin,
# truncated as VPA truncates; limits in the pods' limit/request ratio). Then the manager is
# killed (-9: no clean-stop checkpoint) and restarted: the periodic checkpoint ConfigMap brings
# the history back, so one more sample makes 11 in the next checkpoint (a lost history would
# make it 1 and the status NotEnoughData). Last, a workload target of a custom kind with a scale
# subresource: the pods its Scale's selector selects. Intervals are shortened by the test flags
# --recommendation-interval/--recommendation-checkpoint-interval/--recommendation-min-samples.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 0; }

start_apiserver "$TMP/data"
mpid=""
trap 'kill -9 $pid $mpid 2>/dev/null || true; rm -rf "$TMP"' EXIT
k apply -f "$KOORD_SOURCE_DIR/deploy/crds/"
expect_rc 0 "apply CRDs"
k create -f "$KOORD_SOURCE_DIR/examples/nodes/node-plain.yaml"
expect_rc 0 "create node"
printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop"}}' >"$TMP/ns.json"
k create -f "$TMP/ns.json"
expect_rc 0 "create namespace"

# pod NAME: one container "web" requesting 1 cpu / 1Gi, limited to 2 cpu / 2Gi, on plain-node.
pod() {
    printf '%s\n' "apiVersion: v1" "kind: Pod" \
        "metadata: {name: $1, namespace: shop, labels: {app: web}}" \
        "spec:" "  nodeName: plain-node" "  containers:" "  - name: web" "    image: nginx" \
        "    resources:" "      requests: {cpu: \"1\", memory: 1Gi}" \
        "      limits: {cpu: \"2\", memory: 2Gi}"
}
pod web-1 >"$TMP/web-1.yaml"
pod web-2 >"$TMP/web-2.yaml"
k create -f "$TMP/web-1.yaml" -f "$TMP/web-2.yaml"
expect_rc 0 "create pods"

start_manager() {
    rm -f "$TMP/mready"
    "$KOORD" manager --listen 127.0.0.1:0 --webhook-listen 127.0.0.1:0 --ready-file "$TMP/mready" \
        --cert-dir "$TMP/m" \
        --client-ca-file "$TMP/data/pki/ca.crt" --leader-election-lease-duration 3 \
        --leader-election-renew-deadline 2 --leader-election-retry-period 1 \
        --recommendation-interval 1 --recommendation-checkpoint-interval 1 \
        --recommendation-min-samples 3 >>"$TMP/manager.log" 2>&1 &
    mpid=$!
    wait_for "manager listening" test -s "$TMP/mready"
    maddr=$(cat "$TMP/mready")
    wait_for "manager ready" curl -sfk "https://$maddr/readyz"
}
start_manager
mca="$TMP/m/koord-manager-ca.crt"

printf '%s\n' "apiVersion: analysis.koordinator.sh/v1alpha1" "kind: Recommendation" \
    "metadata: {name: web, namespace: shop}" "spec:" "  target:" "    type: podSelector" \
    "    podSelector: {matchLabels: {app: web}}" >"$TMP/rec.yaml"
k apply -f "$TMP/rec.yaml"
expect_rc 0 "apply Recommendation"

cond() { # TYPE: "status reason" of the condition
    kubectl get recommendation -n shop web \
        -o jsonpath="{.status.conditions[?(@.type==\"$1\")].status} {.status.conditions[?(@.type==\"$1\")].reason}"
}
cond_is() { [ "$(cond "$1")" = "$2" ]; }
wait_for "NotEnoughData before any sample" cond_is RecommendationProvided "False NotEnoughData"
cond_is NoObjectsMatched "False PodsMatched" || fail "NoObjectsMatched: $(cond NoObjectsMatched)"

metric() { curl -sfk "https://$maddr/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
metric_is() { [ "$(metric "$1")" = "$2" ]; }

# report SECONDS_FROM_BASE: both pods use 500m and 600Mi; web-2 is left out with ONLY_WEB1=1.
base=$(($(date +%s) - 100))
report() {
    local t
    t=$(date -u -d "@$((base + $1))" +%Y-%m-%dT%H:%M:%SZ)
    {
        printf '{"updateTime":"%s","nodeMetric":{"nodeUsage":{"resources":{"cpu":"2","memory":"4Gi"}}},' "$t"
        printf '"podsMetric":[{"namespace":"shop","name":"web-1","podUsage":{"resources":{"cpu":"500m","memory":"600Mi"}}}'
        [ -n "${ONLY_WEB1:-}" ] || printf ',{"namespace":"shop","name":"web-2","podUsage":{"resources":{"cpu":"500m","memory":"600Mi"}}}'
        printf ']}\n'
    } >"$TMP/status.json"
    run "$KOORD" report --node plain-node -f "$TMP/status.json" --keep-update-time \
        --server "https://$maddr" --certificate-authority "$mca"
    expect_rc 0 "report at +$1 s"
}
# Each report waits until the manager fed it, so that no report replaces one not yet read.
for i in 1 2 3 4 5; do
    report "$i"
    wait_for "samples of report $i fed" metric_is koord_manager_recommendation_samples_total $((2 * i))
done

# The estimate, by hand: bucket(v) = floor(ln(v (r-1)/first + 1) / ln r), its end
# first (r^(b+1) - 1)/(r - 1); cpu in millicores truncated, then x 1.15 truncated; memory in
# bytes likewise; limits x 2 (limit/request of the pods). 500m -> bucket 25, end 0.51113 core
# -> 511m -> 587m; 600Mi -> bucket 29, end 664388475.x bytes -> 764046746.
expected=$(awk 'function bend(v, f,   b) { b = int(log(v * 0.05 / f + 1) / log(1.05)); return f * (1.05 ^ (b + 1) - 1) / 0.05 }
BEGIN {
    cpu = int(int(bend(0.5, 0.01) * 1000) * 1.15); if (cpu < 25) cpu = 25
    mem = int(int(bend(600 * 1048576, 1e7)) * 1.15); if (mem < 262144000) mem = 262144000
    printf "web %dm %d %dm %d", cpu, mem, cpu * 2, mem * 2
}')
[ "$expected" = "web 587m 764046746 1174m 1528093492" ] || fail "hand computation: $expected"
got() {
    kubectl get recommendation -n shop web -o jsonpath='{.status.podStatus.containerStatuses[0].containerName} {.status.podStatus.containerStatuses[0].resources.cpu} {.status.podStatus.containerStatuses[0].resources.memory} {.status.podStatus.containerStatuses[0].resources.limits\.cpu} {.status.podStatus.containerStatuses[0].resources.limits\.memory}'
}
got_expected() { [ "$(got)" = "$expected" ]; }
wait_for "recommendation = $expected" got_expected || echo "got: $(got)" >&2
cond_is RecommendationProvided "True RecommendationComputed" || fail "provided: $(cond RecommendationProvided)"
cond_is LowConfidence "True ShortHistory" || fail "confidence: $(cond LowConfidence)"
k get recommendation -n shop web -o jsonpath='{.status.updateTime}'
[ -n "$(cat "$TMP/out")" ] || fail "no updateTime"

# The checkpoint: owned by the Recommendation, 10 samples of container web.
ckpt() { kubectl get configmap -n shop web-recommendation-checkpoint -o jsonpath='{.data.checkpoint}'; }
ckpt_has() { ckpt | grep -q "$1"; }
wait_for "checkpoint with 10 samples" ckpt_has '"containerName":"web".*"totalSamplesCount":10'
k get configmap -n shop web-recommendation-checkpoint -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.metadata.ownerReferences[0].uid}'
expect_out "Recommendation/web $(kubectl get recommendation -n shop web -o jsonpath='{.metadata.uid}')" "checkpoint owner"

# Kill the manager (no clean-stop checkpoint) and start another: history comes back.
kill -9 "$mpid"
wait "$mpid" 2>/dev/null || true
start_manager
reconciled() { [ "$(metric 'koord_manager_reconciles_total{controller="recommendation"}')" -ge 1 ] 2>/dev/null; }
wait_for "the new manager reconciled the Recommendation" reconciled
ONLY_WEB1=1 report 10
wait_for "the new sample fed" metric_is koord_manager_recommendation_samples_total 1
wait_for "checkpoint with 10 + 1 samples" ckpt_has '"totalSamplesCount":11'
# 11 samples, 10 at 500m: p90 (9.9 of 11) is still the 500m bucket.
[ "$(got)" = "$expected" ] || fail "after restart: $(got)"
cond_is RecommendationProvided "True RecommendationComputed" || fail "after restart: $(cond RecommendationProvided)"

# Deleting the Recommendation deletes its checkpoint.
k delete recommendation -n shop web
expect_rc 0 "delete Recommendation"
ckpt_gone() { ! kubectl get configmap -n shop web-recommendation-checkpoint >/dev/null 2>&1; }
wait_for "checkpoint deleted with its Recommendation" ckpt_gone

# A workload target of any kind with a scale subresource (VPA's way): the pods its Scale's
# status.selector selects. WebApp, a custom resource with subresources.scale; shopapp selects
# app=web (both pods), empty selects nothing.
cat >"$TMP/webapp-crd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: webapps.demo.koord.test}
spec:
  group: demo.koord.test
  scope: Namespaced
  names: {plural: webapps, singular: webapp, kind: WebApp, listKind: WebAppList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas,
              labelSelectorPath: .status.selector}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec: {type: object, properties: {replicas: {type: integer}}}
          status: {type: object, properties: {replicas: {type: integer}, selector: {type: string}}}
EOF
k apply -f "$TMP/webapp-crd.yaml"
expect_rc 0 "create the WebApp CRD"
for app in shopapp:app=web empty:app=none; do
    printf 'apiVersion: demo.koord.test/v1\nkind: WebApp\nmetadata: {name: %s, namespace: shop}\nspec: {replicas: 2}\n' \
        "${app%%:*}" | k create -f -
    expect_rc 0 "create WebApp ${app%%:*}"
    k patch webapp -n shop "${app%%:*}" --subresource=status --type merge \
        -p "{\"status\":{\"replicas\":2,\"selector\":\"${app#*:}\"}}"
    expect_rc 0 "WebApp ${app%%:*} status"
    printf '%s\n' "apiVersion: analysis.koordinator.sh/v1alpha1" "kind: Recommendation" \
        "metadata: {name: ${app%%:*}, namespace: shop}" "spec:" "  target:" "    type: workload" \
        "    workload: {apiVersion: demo.koord.test/v1, kind: WebApp, name: ${app%%:*}}" |
        k apply -f -
    expect_rc 0 "apply Recommendation ${app%%:*}"
done
cond_of() { # NAME TYPE
    kubectl get recommendation -n shop "$1" \
        -o jsonpath="{.status.conditions[?(@.type==\"$2\")].status} {.status.conditions[?(@.type==\"$2\")].reason}"
}
cond_of_is() { [ "$(cond_of "$1" "$2")" = "$3" ]; }
wait_for "shopapp's Scale selects the pods" cond_of_is shopapp NoObjectsMatched "False PodsMatched"
wait_for "empty's Scale selects none" cond_of_is empty NoObjectsMatched "True NoPodsMatched"
before=$(metric koord_manager_recommendation_samples_total)
for i in 1 2 3; do
    report $((10 + i))
    wait_for "samples of report $((10 + i)) fed" metric_is koord_manager_recommendation_samples_total $((before + 2 * i))
done
got_of() {
    kubectl get recommendation -n shop "$1" -o jsonpath='{.status.podStatus.containerStatuses[0].containerName} {.status.podStatus.containerStatuses[0].resources.cpu} {.status.podStatus.containerStatuses[0].resources.memory} {.status.podStatus.containerStatuses[0].resources.limits\.cpu} {.status.podStatus.containerStatuses[0].resources.limits\.memory}'
}
got_of_expected() { [ "$(got_of shopapp)" = "$expected" ]; }
wait_for "shopapp's recommendation = $expected" got_of_expected || echo "got: $(got_of shopapp)" >&2

kill -TERM "$mpid"
wait "$mpid" || fail "manager exit status $?"
mpid=""
finish
