#!/bin/bash
# koord manager --cert-secret (deploy/manager.yaml): replicas share their serving CAs through a
# Secret, so the webhook caBundle and the CA agents trust are one per cluster, not one per
# replica. Checked against koord apiserver with deploy/'s webhook configurations applied:
#  - the first replica creates the Secret with both CA pairs; a second replica, with its own
#    certificate directory, takes them: same CA files, and its serving certificates verify
#    against the first replica's CA;
#  - ConfigMap koord-manager-ca carries the NodeMetric API's CA (what deploy/koordlet.yaml
#    mounts), and the webhook configurations' caBundle is the shared webhook CA;
#  - an empty Secret (upstream's chart creates koordinator-webhook-certs empty) is filled in;
#  - a Secret that cannot be used (wrong data) is a clear start-up error, not a silent new CA.
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"

start_apiserver "$TMP/data"
k apply -f deploy/crds/ -f deploy/webhooks.yaml
expect_rc 0 "apply CRDs and webhook configurations"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; kill -9 "$pid" 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
# start_manager NAME SECRET: a replica with certificates in $TMP/NAME, ports in $TMP/NAME.*
start_manager() {
    "$KOORD" manager --kubeconfig "$KUBECONFIG" --listen 127.0.0.1:0 --ready-file "$TMP/$1.ready" \
        --webhook-listen 127.0.0.1:0 --webhook-ready-file "$TMP/$1.wready" --cert-dir "$TMP/$1" \
        --client-ca-file "$TMP/data/pki/ca.crt" --cert-secret "$2" --enable-leader-election \
        --v=4 --logtostderr --sync-period=0 \
        --leader-election-lease-duration 3 --leader-election-renew-deadline 2 \
        --leader-election-retry-period 1 >>"$TMP/$1.log" 2>&1 &
    pids+=($!)
    wait_for "$1 listening" test -s "$TMP/$1.wready"
}
secret_key() {
    kubectl get secret -n koordinator-system "$1" -o "jsonpath={.data.$2}" | base64 -d
}

# 1. No Secret yet: replica a makes the CAs and creates it; replica b takes them.
start_manager a koordinator-webhook-certs
k get secret -n koordinator-system koordinator-webhook-certs -o jsonpath='{.data}'
expect_rc 0 "the Secret exists"
for key in koord-manager-ca.crt koord-manager-ca.key koord-webhook-ca.crt koord-webhook-ca.key; do
    expect_out "\"${key}\"" "Secret key $key"
    secret_key koordinator-webhook-certs "${key//./\\.}" >"$TMP/secret.$key"
    cmp -s "$TMP/secret.$key" "$TMP/a/$key" || fail "Secret's $key is not replica a's"
done
start_manager b koordinator-webhook-certs
for f in koord-manager-ca.crt koord-manager-ca.key koord-webhook-ca.crt koord-webhook-ca.key; do
    cmp -s "$TMP/a/$f" "$TMP/b/$f" || fail "replica b's $f differs from replica a's"
done
cmp -s "$TMP/a/koord-webhook.crt" "$TMP/b/koord-webhook.crt" && fail "replicas share a serving certificate (want one each)"
# b's servers present certificates of a's CAs.
run curl -sS --cacert "$TMP/a/koord-webhook-ca.crt" "https://$(cat "$TMP/b.wready")/readyz"
grep -q 'SSL\|certificate' "$TMP/out" && fail "replica b's webhook certificate is not of the shared CA: $(cat "$TMP/out")"
run curl -sS --cacert "$TMP/a/koord-manager-ca.crt" "https://$(cat "$TMP/b.ready")/healthz"
expect_rc 0 "replica b's NodeMetric port verified with replica a's CA"
expect_out ok "b /healthz"

# 2. The agents' CA, and the caBundle every replica keeps.
k get configmap -n koordinator-system koord-manager-ca -o 'jsonpath={.data.ca\.crt}'
expect_rc 0 "ConfigMap koord-manager-ca"
cmp -s "$TMP/out" "$TMP/a/koord-manager-ca.crt" ||
    fail "koord-manager-ca's ca.crt is not the shared NodeMetric CA: $(cat "$TMP/out")"
bundle_is_shared() {
    kubectl get mutatingwebhookconfiguration koordinator-mutating-webhook-configuration \
        -o 'jsonpath={.webhooks[0].clientConfig.caBundle}' | base64 -d | cmp -s - "$TMP/a/koord-webhook-ca.crt"
}
wait_for "mutating caBundle = the shared webhook CA" bundle_is_shared

# A replica stops cleanly (under ASan: without leaks) after taking the shared CAs.
kill -TERM "${pids[1]}"
wait "${pids[1]}" || fail "replica b exit status $? on SIGTERM; log: $(tail -n 20 "$TMP/b.log")"

# 3. An empty Secret, as upstream's chart leaves it, is filled in.
cat >"$TMP/empty.yaml" <<'EOF2'
apiVersion: v1
kind: Secret
metadata: {name: empty-certs, namespace: koordinator-system}
EOF2
k apply -f "$TMP/empty.yaml"
expect_rc 0 "create the empty Secret"
start_manager c empty-certs
secret_key empty-certs 'koord-webhook-ca\.crt' | cmp -s - "$TMP/c/koord-webhook-ca.crt" ||
    fail "the empty Secret was not filled with replica c's CA"

# 4. A Secret whose data is not a PEM is refused at start with the reason, and left alone.
cat >"$TMP/bad.yaml" <<'EOF2'
apiVersion: v1
kind: Secret
metadata: {name: bad-certs, namespace: koordinator-system}
stringData: {koord-manager-ca.crt: "not a pem", koord-manager-ca.key: "x", koord-webhook-ca.crt: "x", koord-webhook-ca.key: "x"}
EOF2
k apply -f "$TMP/bad.yaml"
expect_rc 0 "create the unusable Secret"
run "$KOORD" manager --kubeconfig "$KUBECONFIG" --listen 127.0.0.1:0 --webhook-listen 127.0.0.1:0 \
    --cert-dir "$TMP/d" --client-ca-file "$TMP/data/pki/ca.crt" --cert-secret bad-certs
expect_rc 1 "manager with an unusable Secret"
expect_out "Secret data koord-manager-ca.crt is not a base64 PEM" "the error says why"
expect_out "bad-certs" "the error names the Secret"
[ "$(secret_key bad-certs 'koord-manager-ca\.crt')" = "not a pem" ] || fail "the unusable Secret was overwritten"
finish
