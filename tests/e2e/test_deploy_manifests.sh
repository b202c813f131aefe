#!/bin/bash
# deploy/ (the kustomize layout that installs koord on a cluster) renders, every document is
# valid for `koord validate` where it knows the kind, the values of kustomization.yaml land
# where docs/install.md says, every flag the manifests pass is one `koord` accepts, and
# deploy/webhooks.yaml matches the webhooks the manager registers itself, and
# `kubectl apply --dry-run=server -k deploy/` goes through against `koord apiserver` for the
# kinds it serves. Kinds koord apiserver does not serve yet are listed as skipped; once every
# kind is served the whole `apply -k` must pass.
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"

run kubectl kustomize deploy/
expect_rc 0 "kubectl kustomize deploy/"
cp "$TMP/out" "$TMP/rendered.yaml"

# One file per document: $TMP/docs/NNN.yaml; kind and apiVersion from its top-level keys.
mkdir "$TMP/docs"
awk -v dir="$TMP/docs" 'BEGIN { n = 0; f = sprintf("%s/%03d.yaml", dir, n) }
    /^---$/ { close(f); n++; f = sprintf("%s/%03d.yaml", dir, n); next }
    { print > f }' "$TMP/rendered.yaml"
top() { sed -n "s/^$1: *//p" "$2" | head -n 1; }
name_of() { awk '/^metadata:/ { m = 1; next } m && /^  name:/ { print $2; exit } /^[^ ]/ { m = 0 }' "$1"; }

# What every installation needs, by kind/name.
want="Namespace/koordinator-system ServiceAccount/koord-manager ServiceAccount/koord-scheduler
ServiceAccount/koordlet ClusterRole/koord-manager ClusterRole/koord-scheduler ClusterRole/koordlet
ClusterRoleBinding/koord-manager ClusterRoleBinding/koord-scheduler ClusterRoleBinding/koordlet
Role/koord-manager Role/koord-scheduler Deployment/koord-manager Deployment/koord-scheduler
DaemonSet/koordlet Service/koord-manager Service/koordinator-webhook-service
APIService/v1alpha1.metrics.koordinator.sh APIService/v1beta1.metrics.k8s.io
MutatingWebhookConfiguration/koordinator-mutating-webhook-configuration
ValidatingWebhookConfiguration/koordinator-validating-webhook-configuration
PriorityClass/koord-prod PriorityClass/koord-mid PriorityClass/koord-batch PriorityClass/koord-free
ConfigMap/slo-controller-config
CustomResourceDefinition/nodeslos.slo.koordinator.sh CustomResourceDefinition/nodemetrics.slo.koordinator.sh
CustomResourceDefinition/reservations.scheduling.koordinator.sh
CustomResourceDefinition/elasticquotas.scheduling.sigs.k8s.io
CustomResourceDefinition/elasticquotaprofiles.quota.koordinator.sh
CustomResourceDefinition/clustercolocationprofiles.config.koordinator.sh
CustomResourceDefinition/recommendations.analysis.koordinator.sh"
: >"$TMP/have"
for d in "$TMP"/docs/*.yaml; do
    echo "$(top kind "$d")/$(name_of "$d")" >>"$TMP/have"
done
for w in $want; do
    grep -qxF "$w" "$TMP/have" || fail "deploy/ renders no $w"
done
# Namespaced objects all in koordinator-system.
for d in "$TMP"/docs/*.yaml; do
    ns=$(awk '/^metadata:/ { m = 1; next } m && /^  namespace:/ { print $2; exit } /^[^ ]/ { m = 0 }' "$d")
    [ -z "$ns" ] || [ "$ns" = koordinator-system ] || fail "$(top kind "$d")/$(name_of "$d") in namespace $ns"
done

# koord validate: every document of a kind it knows is valid; the others are listed.
validate_skipped=""
for d in "$TMP"/docs/*.yaml; do
    obj="$(top kind "$d")/$(name_of "$d")"
    run "$KOORD" validate --strict -f "$d"
    if grep -q 'no matches for kind' "$TMP/out"; then
        validate_skipped="$validate_skipped $obj"
        continue
    fi
    expect_rc 0 "koord validate $obj"
done
echo "koord validate does not know (skipped):$validate_skipped"

# The values of kustomization.yaml, where its comments and docs/install.md say they land.
doc_of() { grep -lx "kind: $1" "$TMP"/docs/*.yaml | while read -r f; do [ "$(name_of "$f")" = "$2" ] && echo "$f"; done | head -n 1; }
mgr=$(doc_of Deployment koord-manager)
sch=$(doc_of Deployment koord-scheduler)
agt=$(doc_of DaemonSet koordlet)
[ -n "$mgr" ] && [ -n "$sch" ] && [ -n "$agt" ] || fail "a workload is missing from the rendering"

# list_of FILE KEY: the items of the first block list KEY (args, command) in FILE, unquoted.
list_of() {
    awk -v key="$2" '
        !on && $0 ~ "^ *(- )?" key ":$" { on = 1; col = index($0, key) - 1; next }
        on { i = match($0, /[^ ]/) - 1
             if (i == col && substr($0, i + 1, 2) == "- ") { v = substr($0, i + 3)
                 if (v ~ /^".*"$/ || v ~ /^'"'"'.*'"'"'$/) v = substr(v, 2, length(v) - 2)
                 print v; next }
             exit }' "$1"
}
[ "$(list_of "$mgr" args | sed -n 8p)" = "--feature-gates=" ] ||
    fail "featureGates patch: manager args[7] is '$(list_of "$mgr" args | sed -n 8p)', want --feature-gates="
list_of "$agt" args | sed -n 6p | grep -q '^-feature-gates=' ||
    fail "koordlet.features patch: koordlet args[5] is '$(list_of "$agt" args | sed -n 6p)'"
for f in "$mgr" "$sch" "$agt"; do
    grep -qx '      - image: koord:latest\|        image: koord:latest' "$f" ||
        fail "$(name_of "$f"): image is not koord:latest (images: in kustomization.yaml): $(grep 'image:' "$f")"
done
grep -qx '  replicas: 2' "$mgr" || fail "manager.replicas: koord-manager does not run 2 replicas"
grep -qx '  replicas: 2' "$sch" || fail "scheduler.replicas: koord-scheduler does not run 2 replicas"
grep -q 'fieldPath: spec.nodeName' "$agt" || fail "koordlet: NODE_NAME not from the downward API"
grep -qx '      hostPID: true' "$agt" || fail "koordlet: not hostPID"
for p in /sys/fs/cgroup /sys/fs /sys; do
    grep -q "path: $p\$" "$agt" || fail "koordlet: no hostPath $p"
done
# resctrl under a mount that sees the host's later mounts.
list_of "$agt" args | grep -qx -- '--resctrl-root=/host-sys-fs/resctrl' || fail "koordlet: --resctrl-root"
grep -A3 'mountPath: /host-sys-fs$' "$agt" | grep -q 'mountPropagation: HostToContainer' ||
    fail "koordlet: /host-sys-fs without HostToContainer propagation"

# Every flag the manifests pass is one koord takes: the container's command and args with
# --help after them exit 0 (a flag koord does not know, or a bad value, exits 2 first).
for f in "$mgr" "$sch" "$agt"; do
    mapfile -t cmdv < <(list_of "$f" command)
    mapfile -t argv < <(list_of "$f" args)
    [ "${cmdv[0]:-}" = /usr/local/bin/koord ] || fail "$(name_of "$f"): command is '${cmdv[*]}'"
    [ "${#argv[@]}" -gt 3 ] || fail "$(name_of "$f"): no args found"
    run "$KOORD" "${cmdv[@]:1}" "${argv[@]}" --help
    expect_rc 0 "$(name_of "$f"): koord ${cmdv[*]:1} ${argv[*]}"
done
# The arguments upstream's Helm chart passes (koordinator-sh/charts: koord-manager.yaml,
# koord-scheduler.yaml, koordlet.yaml with the default values) are taken too, so a user who
# swaps upstream's images for koord's keeps their manifests.
run env WEBHOOK_PORT=9876 "$KOORD" manager --enable-leader-election --metrics-addr=:8080 \
    --health-probe-addr=:8000 --logtostderr=true --leader-election-namespace=koordinator-system \
    --v=4 --feature-gates= --sync-period=0 --help
expect_rc 0 "upstream koord-manager's arguments"
run "$KOORD" scheduler --leader-elect=true --port=10251 --logtostderr=true \
    --authentication-skip-lookup=true --leader-elect-resource-namespace=koordinator-system --v=4 \
    --feature-gates= --help
expect_rc 0 "upstream koord-scheduler's arguments"
run "$KOORD" agent -addr=:9316 -cgroup-root-dir=/host-cgroup/ \
    -feature-gates=BECPUEvict=true,BEMemoryEvict=true,CgroupReconcile=true,Accelerators=true \
    -runtime-hooks-host-endpoint=/var/run/koordlet/koordlet.sock --logtostderr=true \
    --evict-by-copilot-agent=true --v=4 --help
expect_rc 0 "upstream koordlet's arguments"
# ... and a wrong one would have been caught.
run "$KOORD" manager --no-such-flag --help
expect_rc 2 "koord manager --no-such-flag"
run "$KOORD" agent -feature-gates=NoSuchGate=true --help
expect_rc 2 "koord agent -feature-gates=NoSuchGate=true"
run "$KOORD" scheduler --v=11 --help
expect_rc 2 "koord scheduler --v=11"

# Server-side dry run against koord apiserver, for the kinds it serves.
start_apiserver "$TMP/data"
# served GROUP/VERSION/KIND: the group-version's discovery document lists the kind.
served() {
    local gv=${1%/*} path
    case "$gv" in */*) path=/apis/$gv ;; *) path=/api/$gv ;; esac
    [ -f "$TMP/disc.${gv//\//_}" ] || kubectl get --raw "$path" >"$TMP/disc.${gv//\//_}" 2>/dev/null || true
    grep -q "\"kind\":\"${1##*/}\"" "$TMP/disc.${gv//\//_}"
}
: >"$TMP/serve.yaml"
apply_skipped=""
for d in "$TMP"/docs/*.yaml; do
    gvk="$(top apiVersion "$d")/$(top kind "$d")"
    if served "$gvk"; then
        { cat "$d"; echo "---"; } >>"$TMP/serve.yaml"
    else
        apply_skipped="$apply_skipped $(top kind "$d")/$(name_of "$d")"
    fi
done
grep -q '^kind: CustomResourceDefinition' "$TMP/serve.yaml" || fail "CRDs not served by koord apiserver?"
k apply --dry-run=server -f "$TMP/serve.yaml"
expect_rc 0 "kubectl apply --dry-run=server (served kinds)"
expect_out "apiservice.apiregistration.k8s.io/v1beta1.metrics.k8s.io created (server dry run)" "dry run"
expect_out "mutatingwebhookconfiguration.admissionregistration.k8s.io/koordinator-mutating-webhook-configuration created (server dry run)" "dry run"
# A dry run stores nothing.
k get apiservice v1beta1.metrics.k8s.io
expect_rc 1 "the dry run stored the APIService"
# deploy/webhooks.yaml holds the webhooks koord manager serves, as it registers them itself in
# standalone mode (every gate on, so all seven): same names, paths, rules, selectors; only
# failurePolicy and timeoutSeconds differ on purpose (the chart's defaults) and caBundle is the
# manager's to write. Both go through koord apiserver's defaulting before they are compared.
k apply -f deploy/crds/
expect_rc 0 "apply the CRDs (the manager's informers wait for them otherwise)"
"$KOORD" manager --kubeconfig "$KUBECONFIG" --listen 127.0.0.1:0 --webhook-listen 127.0.0.1:0 \
    --webhook-ready-file "$TMP/wready" --cert-dir "$TMP/m" --client-ca-file "$TMP/data/pki/ca.crt" \
    --register-webhooks 127.0.0.1:0 \
    --feature-gates ConfigMapValidatingWebhook=true,NodeMutatingWebhook=true >"$TMP/manager.log" 2>&1 &
mpid=$!
registered() { kubectl get validatingwebhookconfiguration koordinator-validating-webhook-configuration; }
wait_for "the manager registered its webhook configurations" registered
kill -TERM "$mpid"
wait "$mpid" || fail "manager exit status $?"
get_hooks() {
    kubectl get mutatingwebhookconfiguration koordinator-mutating-webhook-configuration -o json >"$TMP/$1.m.json"
    kubectl get validatingwebhookconfiguration koordinator-validating-webhook-configuration -o json >"$TMP/$1.v.json"
}
get_hooks manager
k delete mutatingwebhookconfiguration koordinator-mutating-webhook-configuration
k delete validatingwebhookconfiguration koordinator-validating-webhook-configuration
k apply -f deploy/webhooks.yaml
expect_rc 0 "apply deploy/webhooks.yaml"
get_hooks deploy
run python3 - "$TMP" <<'PY'
import json, sys
t = sys.argv[1]
def hooks(src):
    out = {}
    for kind in "mv":
        for w in json.load(open(f"{t}/{src}.{kind}.json"))["webhooks"]:
            w = dict(w)
            cc = dict(w.pop("clientConfig"))
            cc.pop("caBundle", None)
            for k in ("failurePolicy", "timeoutSeconds"):
                w.pop(k, None)
            w["clientConfig"] = cc
            out[(kind, w["name"])] = w
    return out
a, b = hooks("manager"), hooks("deploy")
bad = 0
for key in sorted(set(a) | set(b)):
    if a.get(key) != b.get(key):
        bad = 1
        print("differs:", key, "\n manager:", json.dumps(a.get(key), sort_keys=True), "\n deploy: ", json.dumps(b.get(key), sort_keys=True))
print(len(a), "webhooks compared")
sys.exit(bad)
PY
expect_rc 0 "deploy/webhooks.yaml = the manager's own webhooks"
expect_out "7 webhooks compared" "all seven webhooks"

# Every kind of deploy/ is served: the whole install dry-runs, as on a fresh cluster (the
# webhook configurations applied above point at a manager that is gone, and the ConfigMap
# webhook fails closed, so they go first).
[ -z "$apply_skipped" ] || fail "koord apiserver does not serve:$apply_skipped"
k delete mutatingwebhookconfiguration koordinator-mutating-webhook-configuration
k delete validatingwebhookconfiguration koordinator-validating-webhook-configuration
k apply --dry-run=server -k deploy/
expect_rc 0 "kubectl apply --dry-run=server -k deploy/"
expect_out "daemonset.apps/koordlet created (server dry run)" "dry run of the agent DaemonSet"
expect_out "clusterrole.rbac.authorization.k8s.io/koord-manager created (server dry run)" "dry run of RBAC"
finish
