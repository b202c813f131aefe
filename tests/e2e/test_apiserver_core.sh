#!/bin/bash
# koord apiserver with kubectl: the core kinds beyond pods and nodes (secrets, services,
# endpoints, priority classes and the pod priority they give), server-side dry run, a node
# identity held to its own node, and TokenReview.
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"
command -v kubectl >/dev/null || { echo "kubectl not installed; skipping"; exit 0; }

printf 'admin-token,admin,1,system:masters\nnode-token,system:node:n1,2,system:nodes\n' >"$TMP/tokens.csv"
start_apiserver "$TMP/data" --token-auth-file "$TMP/tokens.csv"
as_node() { run kubectl --request-timeout=20s --kubeconfig=/dev/null --server="https://$server" \
    --insecure-skip-tls-verify --token=node-token "$@"; }

# Secrets: stringData arrives base64-encoded in data; Table columns TYPE and DATA.
cat >"$TMP/secret.yaml" <<'YAML'
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {user: koord, password: s3cret}
YAML
k apply -f "$TMP/secret.yaml"
expect_rc 0 "apply secret"
k get secret creds -o jsonpath='{.data.user}'
expect_out "a29vcmQ=" "stringData folded into data"
k get secret creds
expect_out "TYPE" "secret table"
expect_out "Opaque" "secret table"
# Applying again re-sends stringData (kubectl reports "configured", as against kube-apiserver:
# the live object holds data, not stringData); the data stays the same.
k apply -f "$TMP/secret.yaml"
expect_rc 0 "apply secret again"
k get secret creds -o jsonpath='{.data.password}'
expect_out "czNjcmV0" "data after the second apply"

# Services: cluster IP from 10.96.0.0/12, node port from 30000-32767, kept across apply.
cat >"$TMP/svc.yaml" <<'YAML'
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
YAML
k apply -f "$TMP/svc.yaml"
expect_rc 0 "apply service"
k get svc web -o jsonpath='{.spec.clusterIP} {.spec.ports[0].nodePort}'
expect_out "10.96.0.1 30000" "allocated cluster IP and node port"
k get svc web
expect_out "80:30000/TCP" "service table ports"
expect_out "CLUSTER-IP" "service table"
sed -i 's/app: web/app: web2/' "$TMP/svc.yaml"
k apply -f "$TMP/svc.yaml"
expect_rc 0 "apply service again"
k get svc web -o jsonpath='{.spec.clusterIP} {.spec.selector.app}'
expect_out "10.96.0.1 web2" "cluster IP kept across apply"
k get svc web -o wide
expect_out "app=web2" "service selector column"

# Priority classes: the system ones exist; Koordinator's are created; a pod gets the value.
k get priorityclasses
expect_out "system-node-critical" "system priority classes"
expect_out "2000001000" "priority class VALUE column"
k apply -f deploy/priorityclasses.yaml
expect_rc 0 "apply priority classes"
k get pc koord-prod -o jsonpath='{.value}'
expect_out "9000" "koord-prod value"
cat >"$TMP/pc.yaml" <<'YAML'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: too-high}
value: 1000000001
YAML
k create -f "$TMP/pc.yaml"
expect_rc 1 "user priority class above the limit"
expect_out "maximum allowed value of a user defined priority is 1000000000" "priority limit"

# Server-side dry run: answers as the write would, stores nothing.
k create -f examples/core/pod-batch.yaml --dry-run=server -o jsonpath='{.spec.priority}'
expect_rc 0 "create --dry-run=server"
expect_out "5000" "dry-run create runs admission"
k get pod batch-worker-0
expect_rc 1 "dry-run create stored nothing"
k create -f examples/core/pod-batch.yaml
expect_rc 0 "create pod"
k delete pod batch-worker-0 --dry-run=server
expect_rc 0 "delete --dry-run=server"
expect_out "deleted (server dry run)" "delete --dry-run=server"
k get pod batch-worker-0 -o name
expect_out "pod/batch-worker-0" "dry-run delete kept the pod"
k label pod batch-worker-0 extra=1 --dry-run=server
expect_rc 0 "label --dry-run=server"
k get pod batch-worker-0 -o jsonpath='{.metadata.labels.extra}'
[ ! -s "$TMP/out" ] || fail "dry-run label was stored: $(cat "$TMP/out")"

# A node identity reads everything but writes only about its own node.
k apply -f examples/nodes/
expect_rc 0 "create nodes"
as_node get nodes -o name
expect_rc 0 "node reads nodes"
as_node label node "$(kubectl get nodes -o jsonpath='{.items[0].metadata.name}')" x=y
expect_rc 1 "node labels another node"
expect_out 'is forbidden: User "system:node:n1" cannot patch resource "nodes"' "node labels another node"
printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}' >"$TMP/cm.json"
as_node create -f "$TMP/cm.json"
expect_rc 1 "node creates a configmap"
expect_out 'configmaps is forbidden: User "system:node:n1" cannot create resource "configmaps" in API group "" in the namespace "default"' "node creates a configmap"
printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}' >"$TMP/n1.json"
as_node create -f "$TMP/n1.json"
expect_rc 0 "node registers itself"
as_node label node n1 koord.sh/agent=up
expect_rc 0 "node labels itself"

# TokenReview: who a token belongs to.
printf '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"node-token"}}' >"$TMP/tr.json"
k create -f "$TMP/tr.json" -o jsonpath='{.status.authenticated} {.status.user.username} {.status.user.groups}'
expect_rc 0 "token review"
expect_out 'true system:node:n1 ["system:nodes","system:authenticated"]' "token review"

finish
