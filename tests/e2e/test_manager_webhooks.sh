#!/bin/bash
# koord manager's admission webhooks (manager-behaviour.md 5, 1.7) over HTTPS, as an API server
# calls them: AdmissionReview v1 POSTed with curl, the server certificate verified against the
# webhook CA the manager generated (what it writes as caBundle). Checked: a ClusterColocation-
# Profile selecting a namespace turns a plain pod into a BE pod (the JSON patch, applied with
# kubectl patch --local, gives the BE label, batch-cpu in integer millicores and the koord-batch
# priority), an invalid slo-controller-config is refused with upstream's message form, a pod
# with batch resources but no BE label is refused, and --register-webhooks writes the Service
# and Endpoints (and the webhook configurations once the API server serves them). The API
# server calling the webhooks itself is not needed here.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || skip "kubectl not installed"
command -v curl >/dev/null || skip "curl not installed"

# Bad flags are refused before anything starts.
run "$KOORD" manager --feature-gates Bogus=true
expect_rc 2 "unknown gate"
expect_out "unrecognized feature gate: Bogus" "unknown gate"
run "$KOORD" manager --feature-gates PodMutatingWebhook=maybe
expect_rc 2 "bad gate value"

start_apiserver "$TMP/data"
mpid=""
trap 'kill -9 $pid $mpid 2>/dev/null || true; rm -rf "$TMP"' EXIT
k apply -f "$KOORD_SOURCE_DIR/deploy/crds/" -f "$KOORD_SOURCE_DIR/deploy/priorityclasses.yaml"
expect_rc 0 "apply CRDs and priority classes"
cat >"$TMP/setup.yaml" <<'EOF2'
apiVersion: v1
kind: Namespace
metadata: {name: batch-jobs, labels: {koordinator.sh/enable-colocation: "true"}}
---
apiVersion: v1
kind: Namespace
metadata: {name: koordinator-system}
---
apiVersion: config.koordinator.sh/v1alpha1
kind: ClusterColocationProfile
metadata: {name: colocation-profile-example}
spec:
  namespaceSelector: {matchLabels: {koordinator.sh/enable-colocation: "true"}}
  qosClass: BE
  priorityClassName: koord-batch
  koordinatorPriority: 1000
  schedulerName: koord-scheduler
  labels: {koordinator.sh/mutated: "true"}
EOF2
k apply -f "$TMP/setup.yaml"
expect_rc 0 "apply namespaces and profile"

"$KOORD" manager --kubeconfig "$KUBECONFIG" --listen 127.0.0.1:0 --ready-file "$TMP/mready" \
    --webhook-listen 127.0.0.1:0 --webhook-ready-file "$TMP/wready" --cert-dir "$TMP/m" \
    --client-ca-file "$TMP/data/pki/ca.crt" --register-webhooks 127.0.0.1:0 \
    --feature-gates ConfigMapValidatingWebhook=true \
    --leader-election-lease-duration 3 --leader-election-renew-deadline 2 \
    --leader-election-retry-period 1 >>"$TMP/manager.log" 2>&1 &
mpid=$!
wait_for "webhook port written" test -s "$TMP/wready"
waddr=$(cat "$TMP/wready")
wport=${waddr##*:}
CA="$TMP/m/koord-webhook-ca.crt"
# Verified TLS: the webhook certificate is signed by its own CA and names 127.0.0.1.
wait_for "webhook ready" curl -sf --cacert "$CA" "https://$waddr/readyz"
wait_for "manager ready (leader and webhook-ready)" curl -sfk "https://$(cat "$TMP/mready")/readyz"

# review PATH OPERATION RESOURCE NAMESPACE OBJECT [OLD]: POSTs an AdmissionReview, the
# response in $TMP/out.
review() {
    printf '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"uid-%s",'\
'"kind":{"group":"","version":"v1","kind":"X"},"resource":{"group":"","version":"v1","resource":"%s"},'\
'"operation":"%s","namespace":"%s","userInfo":{"username":"admin"},"object":%s,"oldObject":%s}}' \
        "$2" "$3" "$2" "$4" "$5" "${6:-null}" >"$TMP/review.json"
    run curl -sS --cacert "$CA" -H 'Content-Type: application/json' \
        --data-binary "@$TMP/review.json" "https://$waddr$1"
}

# 1. CCP mutation: a plain pod in the selected namespace.
POD='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"job","namespace":"batch-jobs"},"spec":{"containers":[{"name":"main","image":"busybox","resources":{"requests":{"cpu":"500m","memory":"1Gi"},"limits":{"cpu":"1","memory":"1Gi"}}}]}}'
review /mutate-pod CREATE pods batch-jobs "$POD"
expect_out '"uid":"uid-CREATE"' "mutate: uid echoed"
expect_out '"allowed":true' "mutate: allowed"
expect_out '"patchType":"JSONPatch"' "mutate: JSONPatch"
patch=$(sed -n 's/.*"patch":"\([^"]*\)".*/\1/p' "$TMP/out" | base64 -d)
[ -n "$patch" ] || fail "mutate: no patch in $(cat "$TMP/out")"
printf '%s' "$POD" >"$TMP/pod.json"
run kubectl patch --local -f "$TMP/pod.json" --type=json -p "$patch" -o json
expect_rc 0 "apply the webhook's patch"
cp "$TMP/out" "$TMP/mutated.json"
jp() { run kubectl patch --local -f "$TMP/mutated.json" --type=merge -p '{}' -o "jsonpath=$1"; }
jp '{.metadata.labels.koordinator\.sh/qosClass} {.metadata.labels.koordinator\.sh/priority} {.metadata.labels.koordinator\.sh/mutated}'
expect_out "BE 1000 true" "mutated labels"
jp '{.spec.priorityClassName} {.spec.priority} {.spec.schedulerName}'
expect_out "koord-batch 5000 koord-scheduler" "mutated priority and scheduler"
# cpu 500m -> batch-cpu 500 (integer millicores), limit 1 -> 1k; memory moves unchanged.
jp '{.spec.containers[0].resources.requests.kubernetes\.io/batch-cpu} {.spec.containers[0].resources.limits.kubernetes\.io/batch-cpu} {.spec.containers[0].resources.requests.kubernetes\.io/batch-memory} [{.spec.containers[0].resources.requests.cpu}]'
expect_out "500 1k 1Gi []" "translated resources"
jp '{.metadata.annotations.node\.koordinator\.sh/extended-resource-spec}'
expect_out '{"containers":{"main":{"limits":{"kubernetes.io/batch-cpu":"1k","kubernetes.io/batch-memory":"1Gi"},"requests":{"kubernetes.io/batch-cpu":"500","kubernetes.io/batch-memory":"1Gi"}}}}' "extended-resource-spec"

# A pod elsewhere is not touched.
review /mutate-pod CREATE pods default '{"metadata":{"name":"web","namespace":"default"},"spec":{"containers":[{"name":"c","image":"i"}]}}'
expect_out '"allowed":true' "unselected: allowed"
grep -q '"patch"' "$TMP/out" && fail "unselected namespace got a patch: $(cat "$TMP/out")"

# 2. The mutated pod passes validation; one with batch resources but no BE label does not.
review /validate-pod CREATE pods batch-jobs "$(cat "$TMP/mutated.json")"
expect_out '"allowed":true' "validate the mutated pod"
review /validate-pod CREATE pods default '{"metadata":{"name":"bad","namespace":"default"},"spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"kubernetes.io/batch-cpu":"1k"},"limits":{"kubernetes.io/batch-cpu":"1k"}}}]}}'
expect_out '"allowed":false' "batch without BE: refused"
expect_out '"code":400' "batch without BE: 400"
expect_out 'labels.koordinator.sh/qosClass: Required value: must specify koordinator QoS BE with koordinator colocation resources' "batch without BE: message"

# 3. An invalid slo-controller-config is refused; another ConfigMap is not looked at.
CM='{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"slo-controller-config","namespace":"koordinator-system","labels":{"koordinator.sh/configmap-type":"slo-controller-config"}},"data":{"colocation-config":"{\"enable\": true, \"cpuReclaimThresholdPercent\": -1}"}}'
review /validate-configmap CREATE configmaps koordinator-system "$CM"
expect_out '"allowed":false' "configmap: refused"
expect_out '"code":400' "configmap: 400"
expect_out '___{\"reason\":\"ConfigParamInvalid\",\"message\":\"data[colocation-config].cpuReclaimThresholdPercent' "configmap: message"
review /validate-configmap CREATE configmaps koordinator-system "${CM/slo-controller-config\"/other\"}"
expect_out '"allowed":true' "other configmap: allowed"

# 4. Bad requests: not a review -> 400; a path without a handler -> 404.
run curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" --data-binary '{"kind":"Pod"}' "https://$waddr/mutate-pod"
expect_out 400 "not a review"
run curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" --data-binary '{}' "https://$waddr/mutate-node-status"
expect_out 404 "gate off: not served"

# 5. --register-webhooks: the Service and Endpoints point at the webhook port; the webhook
# configurations are written once the API server serves admissionregistration.k8s.io.
svc_ok() {
    [ "$(kubectl get endpoints -n koordinator-system koordinator-webhook-service -o jsonpath='{.subsets[0].addresses[0].ip}:{.subsets[0].ports[0].port}')" = "127.0.0.1:$wport" ] &&
        [ "$(kubectl get service -n koordinator-system koordinator-webhook-service -o jsonpath='{.spec.ports[0].port}')" = 443 ]
}
wait_for "webhook Service and Endpoints" svc_ok
if kubectl api-resources --api-group=admissionregistration.k8s.io 2>/dev/null | grep -q mutatingwebhookconfigurations; then
    cfg_ok() {
        kubectl get mutatingwebhookconfiguration koordinator-mutating-webhook-configuration -o jsonpath='{.webhooks[*].name}' | grep -q mpod-create.koordinator.sh &&
            [ "$(kubectl get validatingwebhookconfiguration koordinator-validating-webhook-configuration -o jsonpath='{.webhooks[0].clientConfig.caBundle}' | base64 -d)" = "$(cat "$CA")" ]
    }
    wait_for "webhook configurations with the caBundle" cfg_ok
else
    # Not served yet: the manager says so once and keeps serving.
    wait_for "registration retried" grep -q "cannot register the webhook configurations" "$TMP/manager.log"
    [ "$(grep -c "cannot register the webhook configurations" "$TMP/manager.log")" -eq 1 ] ||
        fail "the registration failure should be logged once"
fi

kill "$mpid"
wait "$mpid" || fail "manager exit status $?"
mpid=""
finish
