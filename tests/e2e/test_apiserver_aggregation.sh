#!/bin/bash
# The aggregation layer with the real kubectl and two real `koord apiserver`s: the second stands
# in for an extension server (it serves the slo.koordinator.sh NodeMetric CRD). It shares the
# first's PKI, so it trusts the cluster CA, and the front server presents the admin certificate
# to it as its proxy client certificate (--proxy-client-cert-file; koord apiserver itself does
# not accept front-proxy headers, a real extension server would be given the front-proxy one).
# Registered through a Service, its Endpoints and an APIService, the group-version shows in
# discovery and kubectl get, create, patch, watch and delete go through the front server;
# killing the backend makes the APIService unavailable (FailedDiscoveryCheck) and requests 503;
# restarting it on the same port brings both back. kubectl explain reads the backend's OpenAPI
# document through the front server.
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"
command -v kubectl >/dev/null || { echo "kubectl not installed; skipping"; exit 0; }

front="$TMP/front"
back="$TMP/back"
bpid=

# start_backend [PORT]: the extension server, in the background ($bpid, $bport).
start_backend() {
    rm -f "$TMP/ready-back"
    "$KOORD" apiserver --data-dir "$back" --listen "127.0.0.1:${1:-0}" \
        --ready-file "$TMP/ready-back" --write-kubeconfig "$TMP/kc-back" \
        >>"$TMP/back.log" 2>&1 &
    bpid=$!
    for _ in $(seq 1 200); do
        [ -s "$TMP/ready-back" ] && { bport=$(cut -d: -f2 "$TMP/ready-back"); return 0; }
        sleep 0.05
    done
    cat "$TMP/back.log"
    fail "backend not ready"
    exit 1
}
kb() { run env KUBECONFIG="$TMP/kc-back" kubectl --request-timeout=20s "$@"; }

# wait_available STATUS [REASON]: polls the APIService's Available condition (30 s at most).
wait_available() {
    for _ in $(seq 1 300); do
        k get apiservice v1alpha1.slo.koordinator.sh \
            -o 'jsonpath={.status.conditions[0].status}/{.status.conditions[0].reason}'
        case "$(cat "$TMP/out")" in "$1/${2:-}"*) return 0 ;; esac
        sleep 0.1
    done
    fail "APIService never became $1 ${2:-}: $(cat "$TMP/out")"
}

start_backend
trap 'kill -9 $bpid 2>/dev/null || true; rm -rf "$TMP"' EXIT
kb create -f deploy/crds/slo.koordinator.sh_nodemetrics.yaml
expect_rc 0 "CRD on the backend"
mkdir -p "$front"
cp -r "$back/pki" "$front/pki"
start_apiserver "$front" --proxy-client-cert-file "$front/pki/admin.crt" \
    --proxy-client-key-file "$front/pki/admin.key"
trap 'kill -9 $pid $bpid 2>/dev/null || true; rm -rf "$TMP"' EXIT

# What extension servers read to trust the front proxy.
k get configmap -n kube-system extension-apiserver-authentication \
    -o 'jsonpath={.data.requestheader-allowed-names} {.data.requestheader-username-headers}'
expect_out '["front-proxy-client"] ["X-Remote-User"]' "extension-apiserver-authentication"

cat >"$TMP/register.yaml" <<EOF
apiVersion: v1
kind: Service
metadata: {name: nodemetrics-backend, namespace: default}
spec:
  ports: [{name: https, port: 443, targetPort: $bport}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: nodemetrics-backend, namespace: default}
subsets:
- addresses: [{ip: 127.0.0.1}]
  ports: [{name: https, port: $bport}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1alpha1.slo.koordinator.sh}
spec:
  group: slo.koordinator.sh
  version: v1alpha1
  service: {namespace: default, name: nodemetrics-backend}
  insecureSkipTLSVerify: true
  groupPriorityMinimum: 1000
  versionPriority: 15
EOF
k apply -f "$TMP/register.yaml"
expect_rc 0 "register"
wait_available True Passed
k get apiservices
expect_out "default/nodemetrics-backend" "get apiservices"
expect_out "True" "get apiservices"
k api-resources --api-group=slo.koordinator.sh
expect_out "nodemetrics" "aggregated resource in discovery"

# Writes and reads through the front server land on the backend.
printf 'apiVersion: slo.koordinator.sh/v1alpha1\nkind: NodeMetric\nmetadata: {name: n1}\n' \
    >"$TMP/n1.yaml"
k create -f "$TMP/n1.yaml"
expect_rc 0 "create through the proxy"
kb get nodemetrics n1 -o name
expect_out "nodemetric.slo.koordinator.sh/n1" "stored on the backend"
k label nodemetric n1 via=proxy
expect_rc 0 "patch through the proxy"
k get nodemetrics --show-labels
expect_out "via=proxy" "get through the proxy"
# kubectl explain reads the group-version's OpenAPI document from the backend, proxied.
k explain nodemetrics.status
expect_rc 0 "explain an aggregated kind"
expect_out "GROUP:      slo.koordinator.sh" "explain an aggregated kind"
expect_out "nodeMetric	<Object>" "explain an aggregated kind"

# A watch through the proxy sees what happens on the backend while it streams.
kubectl --request-timeout=0 get nodemetrics -w -o name >"$TMP/watch" 2>&1 &
wpid=$!
sleep 1
printf 'apiVersion: slo.koordinator.sh/v1alpha1\nkind: NodeMetric\nmetadata: {name: n2}\n' \
    >"$TMP/n2.yaml"
kb create -f "$TMP/n2.yaml"
for _ in $(seq 1 100); do grep -q "nodemetric.slo.koordinator.sh/n2" "$TMP/watch" && break; sleep 0.1; done
grep -q "nodemetric.slo.koordinator.sh/n2" "$TMP/watch" || fail "watch through the proxy: $(cat "$TMP/watch")"
kill "$wpid" 2>/dev/null || true
wait "$wpid" 2>/dev/null || true

# Without credentials: 401, from the front server.
run curl -sk "https://$server/apis/slo.koordinator.sh/v1alpha1/nodemetrics"
expect_out '"code":401' "proxy without credentials"

# The backend goes away: unavailable, and requests fail fast with 503.
kill -9 "$bpid"
wait "$bpid" 2>/dev/null || true
wait_available False FailedDiscoveryCheck
k get nodemetrics
expect_rc 1 "get while unavailable"
expect_out "ServiceUnavailable" "get while unavailable"

# Back on the same port: available again, the objects where they were.
start_backend "$bport"
wait_available True Passed
k delete nodemetric n2
expect_rc 0 "delete through the proxy"
k get nodemetrics -o name
expect_out "nodemetric.slo.koordinator.sh/n1" "get after the backend came back"

# Deleting the APIService takes the group-version out of discovery.
k delete apiservice v1alpha1.slo.koordinator.sh
expect_rc 0 "delete apiservice"
for _ in $(seq 1 100); do
    k get --raw /apis/slo.koordinator.sh
    [ "$rc" -ne 0 ] && break
    sleep 0.1
done
expect_out "NotFound" "group gone with its APIService"
finish
