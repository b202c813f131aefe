#!/bin/bash
# koord apiserver driven by the real kubectl: discovery, CRDs from deploy/crds, the valid
# examples, get/delete, schema violations rejected with the field path, and every object
# surviving kill -9 of the server. (Watch, patch and Table output come with later work.)
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"
command -v kubectl >/dev/null || { echo "kubectl not installed; skipping"; exit 0; }

data="$TMP/data"
printf '# bearer tokens\nt0k3n-for-e2e,alice,1001,"dev,ops"\n' >"$TMP/tokens.csv"
start_server() { start_apiserver "$data" --token-auth-file "$TMP/tokens.csv"; }

# A malformed token file stops the server before it serves, naming the line.
printf 'ok,alice,1\nbroken\n' >"$TMP/bad-tokens.csv"
run "$KOORD" apiserver --data-dir "$data" --listen 127.0.0.1:0 --token-auth-file "$TMP/bad-tokens.csv"
expect_rc 2 "malformed token file"
expect_out 'bad-tokens.csv": line 2: want token,user,uid' "malformed token file"

start_server
k get --raw /healthz
expect_rc 0 "healthz"
expect_out "ok" "healthz"
# Without the client certificate only the health endpoints answer.
run curl -sk "https://$server/healthz"
expect_out "ok" "healthz without credentials"
run curl -sk "https://$server/api/v1/namespaces"
expect_out '"code":401' "list without credentials"
# A bearer token from --token-auth-file authenticates; an unknown one does not.
run curl -sk -H "Authorization: Bearer t0k3n-for-e2e" "https://$server/api/v1/namespaces"
expect_out '"kind":"NamespaceList"' "list with a bearer token"
run curl -sk -H "Authorization: Bearer t0k3n-for-e2" "https://$server/api/v1/namespaces"
expect_out '"code":401' "list with a wrong bearer token"
run kubectl --kubeconfig=/dev/null --server="https://$server" --insecure-skip-tls-verify \
    --token=t0k3n-for-e2e get namespace default -o name
expect_out "namespace/default" "kubectl with a bearer token"
k get namespaces
expect_rc 0 "get namespaces"
for ns in default kube-system koordinator-system; do expect_out "$ns" "get namespaces"; done
k api-resources
expect_rc 0 "api-resources"
expect_out "pods" "api-resources"
expect_out "leases" "api-resources"

k create -f deploy/crds/
expect_rc 0 "create CRDs"
expect_out "customresourcedefinition.apiextensions.k8s.io/nodeslos.slo.koordinator.sh created" "create CRDs"
k api-resources --api-group=slo.koordinator.sh
expect_out "nodeslos" "CRD kinds in discovery"

# Objects need their namespace to exist (404 otherwise); then every valid example (the
# koordinator-system Namespace example exists from the start).
printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}}' >"$TMP/ns.json"
k create -f examples/reference/elasticquota.yaml
expect_rc 1 "object in a missing namespace"
expect_out 'namespaces "team-a" not found' "object in a missing namespace"
k create -f "$TMP/ns.json"
expect_rc 0 "create namespace"
args=(-f examples/seed/ -f examples/reference/ -f examples/nodes/)
for f in examples/core/*.yaml; do
    [ "$f" = examples/core/namespace.yaml ] || args+=(-f "$f")
done
# A pod naming a PriorityClass that does not exist is refused (the Priority admission plugin);
# with Koordinator's classes installed it gets the class's value.
k create -f examples/core/pod-batch.yaml
expect_rc 1 "pod in a missing priority class"
expect_out 'pods "batch-worker-0" is forbidden: no PriorityClass with name koord-batch was found' "missing priority class"
k apply -f deploy/priorityclasses.yaml
expect_rc 0 "apply priority classes"
expect_out "priorityclass.scheduling.k8s.io/koord-batch created" "apply priority classes"
k create "${args[@]}"
expect_rc 0 "create examples"
expect_out "reservation.scheduling.koordinator.sh/reservation-sample created" "create examples"
expect_out "pod/gated-web-0 created" "create examples"
k create -f examples/core/namespace.yaml
expect_rc 1 "namespace that exists"
expect_out 'namespaces "koordinator-system" already exists' "namespace that exists"
k get pod batch-worker-0 -o jsonpath='{.spec.priority}/{.spec.preemptionPolicy}'
expect_out "5000/PreemptLowerPriority" "priority resolved from the class"
k get reservations
expect_out "batch-job-reservation" "get reservations"
k get recom -n default -o jsonpath='{.items[*].metadata.name}'
expect_out "example-recommendation" "get recom via short name"
k get nodeslo production-node-slo -o yaml
expect_out "cpuSuppressThresholdPercent: 70" "get -o yaml"
expect_out "resourceVersion:" "get -o yaml"

# Schema violations are refused with the field path.
k create -f examples/invalid/nodeslo-percent-over-100.yaml
expect_rc 1 "invalid NodeSLO"
expect_out "spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent" "invalid NodeSLO"
k create -f examples/invalid/pod-gate-with-nodename.yaml
expect_rc 1 "gated pod with nodeName"
expect_out "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared" "gated pod"
k create -f examples/invalid/reservation-missing-owners.yaml
expect_rc 1 "reservation without owners"
expect_out "spec.owners: Required value" "reservation without owners"

# apply (created, then unchanged, then configured through a merge patch), label, annotate and
# patch of each type; a patch that breaks the schema is refused with the field path.
k apply -f examples/seed/nodeslo.yaml
expect_rc 0 "apply existing"
expect_out "configured" "apply over a created object"
k apply -f examples/seed/nodeslo.yaml
expect_out "unchanged" "apply again"
sed 's/cpuSuppressThresholdPercent: 70/cpuSuppressThresholdPercent: 60/' examples/seed/nodeslo.yaml >"$TMP/nodeslo.yaml"
k apply -f "$TMP/nodeslo.yaml"
expect_out "production-node-slo configured" "apply a change"
k get nodeslo production-node-slo -o jsonpath='{.spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent}'
expect_out "60" "applied value"
k label reservation batch-job-reservation team=a
expect_out "labeled" "label"
k annotate node plain-node note=hello
expect_out "annotated" "annotate a built-in kind"
k get node plain-node -o jsonpath='{.metadata.annotations.note}'
expect_out "hello" "annotation stored"
k patch nodeslo production-node-slo --type json -p '[{"op":"replace","path":"/spec/resourceUsedThresholdWithBE/cpuSuppressThresholdPercent","value":55}]'
expect_rc 0 "json patch"
k patch nodeslo production-node-slo --type merge -p '{"spec":{"resourceUsedThresholdWithBE":{"cpuSuppressThresholdPercent":150}}}'
expect_rc 1 "merge patch out of range"
expect_out "spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent" "merge patch out of range"

# Scheduling gates (KEP-3521): STATUS SchedulingGated; gates may only be removed; a gated pod
# cannot be bound; once the gates are gone it can.
k get pod gated-web-0
expect_out "SchedulingGated" "gated pod STATUS"
k get pod gated-web-0 -o jsonpath='{.status.conditions[0].reason}'
expect_out "SchedulingGated" "gated pod condition"
k get pod gated-web-0 -o json
cp "$TMP/out" "$TMP/pod.json"
sed 's|"name": "koordinator.sh/reservation"|"name": "example.com/new-gate"|' "$TMP/pod.json" >"$TMP/added.json"
k replace -f "$TMP/added.json"
expect_rc 1 "adding a gate"
expect_out "only deletion is allowed, but found new scheduling gate 'example.com/new-gate'" "adding a gate"
printf '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"gated-web-0"},"target":{"kind":"Node","name":"anolis-node"}}' >"$TMP/binding.json"
k create --raw /api/v1/namespaces/default/pods/gated-web-0/binding -f "$TMP/binding.json"
expect_rc 1 "binding a gated pod"
expect_out "has non-empty .spec.schedulingGates" "binding a gated pod"
# Remove the gates one by one: with kubectl edit (a strategic merge patch deleting one gate by
# name), then with replace (PUT of the whole object, as a controller would).
printf '#!/bin/sh\nsed -i "/- name: example.com\\/quota/d" "$1"\n' >"$TMP/ungate"
chmod +x "$TMP/ungate"
KUBE_EDITOR="$TMP/ungate" k edit pod gated-web-0
expect_rc 0 "removing one gate"
k get pod gated-web-0 -o jsonpath='{.spec.schedulingGates[*].name}'
expect_out "koordinator.sh/reservation" "one gate left"
[ "$(cat "$TMP/out")" = "koordinator.sh/reservation" ] || fail "gates left: $(cat "$TMP/out")"
k get pod gated-web-0 -o yaml
sed '/schedulingGates:/,+1d' "$TMP/out" >"$TMP/no-gates.yaml"
k replace -f "$TMP/no-gates.yaml"
expect_rc 0 "removing the last gate"
# Other spec changes are refused, as kube-apiserver refuses them (only images, tolerations
# added, activeDeadlineSeconds...).
sed 's/cpu: 500m/cpu: 600m/' "$TMP/no-gates.yaml" | grep -v resourceVersion >"$TMP/resized.yaml"
k replace -f "$TMP/resized.yaml"
expect_rc 1 "changing a container's resources"
expect_out "spec: Forbidden: pod updates may not change fields other than" "changing a container's resources"
k create --raw /api/v1/namespaces/default/pods/gated-web-0/binding -f "$TMP/binding.json"
expect_rc 0 "binding after the gates are gone"
k get pod gated-web-0 -o jsonpath='{.spec.nodeName}'
expect_out "anolis-node" "bound pod"
k create --raw /api/v1/namespaces/default/pods/gated-web-0/binding -f "$TMP/binding.json"
expect_rc 1 "binding twice"
expect_out 'is already assigned to node "anolis-node"' "binding twice"

# kubectl get -w: rows appear as objects are created and deleted. (Waits are for a condition,
# bounded at 20 s, never fixed sleeps.)
wait_text() { # $1: file, $2: text
    for _ in $(seq 1 400); do grep -qF -- "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
    fail "timed out waiting for '$2' in $1: $(cat "$1")"
}
printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"first-cm"}}' >"$TMP/cm0.json"
k create -f "$TMP/cm0.json"
kubectl get configmaps -n default -w >"$TMP/watch.out" 2>&1 &
watch_pid=$!
wait_text "$TMP/watch.out" "first-cm"
printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"watched-cm"},"data":{"a":"1"}}' >"$TMP/cm.json"
k create -f "$TMP/cm.json"
expect_rc 0 "create while watching"
wait_text "$TMP/watch.out" "watched-cm"
kill "$watch_pid" 2>/dev/null || true
wait "$watch_pid" 2>/dev/null || true
# --output-watch-events names each event: ADDED, MODIFIED, DELETED.
kubectl get configmaps -n default -w --output-watch-events >"$TMP/events.out" 2>&1 &
watch_pid=$!
wait_text "$TMP/events.out" "first-cm"
k label configmap watched-cm step=two
wait_text "$TMP/events.out" "MODIFIED"
k delete configmap watched-cm
wait_text "$TMP/events.out" "DELETED"
grep -q "ADDED.*watched-cm" "$TMP/events.out" || fail "no ADDED row: $(cat "$TMP/events.out")"
kill "$watch_pid" 2>/dev/null || true
wait "$watch_pid" 2>/dev/null || true

# describe, and edit through an editor that is a sed command.
k describe pod gated-web-0
expect_rc 0 "describe pod"
expect_out "Priority:" "describe pod"
k describe nodeslo production-node-slo
expect_out "Cpu Suppress Threshold Percent:" "describe a custom resource"
printf '#!/bin/sh\nsed -i "s/cpuSuppressThresholdPercent: .*/cpuSuppressThresholdPercent: 45/" "$1"\n' >"$TMP/editor"
chmod +x "$TMP/editor"
KUBE_EDITOR="$TMP/editor" k edit nodeslo production-node-slo
expect_rc 0 "edit"
expect_out "edited" "edit"
k get nodeslo production-node-slo -o jsonpath='{.spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent}'
expect_out "45" "edited value"

# delete --wait returns once the object is gone; a finalizer keeps it until removed.
printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"held","finalizers":["example.com/hold"]}}' >"$TMP/held.json"
k create -f "$TMP/held.json"
k delete configmap held --wait=false
expect_rc 0 "delete with a finalizer"
k get configmap held -o jsonpath='{.metadata.deletionTimestamp}'
expect_out "T" "deletionTimestamp set"
k patch configmap held --type merge -p '{"metadata":{"finalizers":null}}'
k get configmap held
expect_rc 1 "gone once the finalizer is removed"
k delete configmap first-cm --wait
expect_rc 0 "delete --wait"
# Deleting a namespace deletes what is in it.
printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"in-team-a","namespace":"team-a"}}' >"$TMP/cm-a.json"
k create -f "$TMP/cm-a.json"
k delete namespace team-a --wait
expect_rc 0 "delete namespace"
k get configmaps -n team-a -o name
[ ! -s "$TMP/out" ] || fail "objects left in a deleted namespace: $(cat "$TMP/out")"
k get elasticquotas -n team-a -o name
[ ! -s "$TMP/out" ] || fail "custom resources left in a deleted namespace: $(cat "$TMP/out")"

# Delete, then the object is gone.
k delete reservation batch-job-reservation
expect_rc 0 "delete"
k get reservation batch-job-reservation
expect_rc 1 "get deleted"
expect_out 'NotFound' "get deleted"

# kill -9 during a burst of creates, then restart: every acknowledged object is still there,
# and CRDs are served again.
(
    for i in $(seq 1 200); do
        printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"burst-%d"}}' "$i" >"$TMP/b.json"
        kubectl --request-timeout=5s create -f "$TMP/b.json" >/dev/null 2>&1 || exit 0
        echo "burst-$i" >>"$TMP/acked"
    done
) &
burst_pid=$!
for _ in $(seq 1 400); do [ "$(wc -l <"$TMP/acked" 2>/dev/null || echo 0)" -ge 10 ] && break; sleep 0.05; done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
wait "$burst_pid" 2>/dev/null || true
start_server
[ "$(wc -l <"$TMP/acked")" -ge 10 ] || fail "burst did not get going"
k get configmaps -n default -o name
for name in $(cat "$TMP/acked"); do
    grep -qx "configmap/$name" "$TMP/out" || fail "acknowledged $name lost by kill -9"
done
k get reservations,nodeslos,nodemetrics -A -o name
expect_rc 0 "after restart"
expect_out "reservation.scheduling.koordinator.sh/reservation-sample" "after restart"
expect_out "nodeslo.slo.koordinator.sh/production-node-slo" "after restart"
k get pods -n default -o name
expect_out "pod/gated-web-0" "pods after restart"
kill "$pid"
wait "$pid" 2>/dev/null || true
finish
