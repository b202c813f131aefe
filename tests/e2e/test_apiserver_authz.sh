#!/bin/bash
# Who may do what, with kubectl as the user types it: `kubectl auth whoami` and `auth can-i`
# (incl. --list) under the default chain and under --authorization-mode=Node,RBAC; a user with
# only a Role's rights gets 403 beyond it; kubectl --as refused without `impersonate` and honoured
# with it (a node identity held to the node rule); the escalation check on roles and bindings;
# RBAC validation (roleRef immutable); `kubectl create token SA` and using that token, before and
# after a RoleBinding, for its audience only; and the bootstrap roles surviving a restart.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || skip "kubectl not installed"

printf '%s\n' 'tok-alice,alice,1001,"dev"' 'tok-bob,bob,1002' >"$TMP/tokens.csv"
as_alice() { run kubectl --kubeconfig=/dev/null --server="https://$server" \
    --certificate-authority="$TMP/data/pki/ca.crt" --token=tok-alice --request-timeout=20s "$@"; }

# ---- the default chain (Node,AlwaysAllow): what the server did before RBAC ----
start_apiserver "$TMP/data" --token-auth-file "$TMP/tokens.csv"
k auth whoami
expect_rc 0 "whoami as admin"
expect_out "system:masters" "whoami as admin"
as_alice auth can-i delete pods
expect_out "yes" "default chain: any user may"
k auth can-i delete configmaps --as=system:node:n1
expect_out "no" "default chain: a node may not delete configmaps"
k auth can-i get pods --as=system:node:n1
expect_out "yes" "default chain: a node reads"
# Impersonation is honoured: the request runs as the node, held to the node rule.
k create configmap c1 -n default --as=system:node:n1
expect_rc 1 "configmap as a node"
expect_out 'configmaps is forbidden: User "system:node:n1" cannot create resource "configmaps"' \
    "configmap as a node"
k auth whoami --as=system:node:n1 --as-group=system:nodes
expect_out "system:node:n1" "whoami impersonated"
expect_out "[system:nodes system:authenticated]" "whoami impersonated groups"
# Impersonating groups without a user is a bad request.
run curl -sS --cacert "$TMP/data/pki/ca.crt" -H "Authorization: Bearer tok-alice" \
    -H "Impersonate-Group: system:masters" "https://$server/api/v1/namespaces"
expect_out '"code":400' "group without user"
kill "$pid"
wait "$pid" 2>/dev/null || true

# ---- Node,RBAC ----
run "$KOORD" apiserver --data-dir "$TMP/bad" --listen 127.0.0.1:0 --authorization-mode=Node,Webhook
expect_rc 1 "unknown authorization mode"
expect_out 'authorization-mode \"Webhook\" is not a valid mode' "unknown authorization mode"
start_apiserver "$TMP/data" --token-auth-file "$TMP/tokens.csv" --authorization-mode=Node,RBAC
k get clusterroles
for r in cluster-admin admin edit view system:basic-user system:discovery \
    system:public-info-viewer; do expect_out "$r " "bootstrap role $r"; done
k get clusterrolebinding cluster-admin -o 'jsonpath={.subjects[0].name}'
expect_out "system:masters" "cluster-admin bound to system:masters"
# The admin certificate (system:masters) keeps full access.
k auth can-i '*' '*'
expect_out "yes" "admin can do everything"
as_alice auth whoami
expect_out "alice" "whoami as alice"
expect_out "[dev system:authenticated]" "alice's groups"
as_alice auth can-i list pods
expect_rc 1 "alice may not list pods yet"
expect_out "no" "alice may not list pods yet"
as_alice get pods -n default
expect_rc 1 "alice lists pods"
expect_out 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"' \
    "alice lists pods"
# A Role's rights, and nothing beyond them.
k create role pod-reader --verb=get,list,watch --resource=pods -n default
expect_rc 0 "create role"
k create rolebinding alice-reads --role=pod-reader --user=alice -n default
expect_rc 0 "create rolebinding"
k get rolebinding alice-reads -n default -o wide
expect_out "Role/pod-reader" "rolebinding's ROLE column"
expect_out "alice" "rolebinding's USERS column"
as_alice get pods -n default
expect_rc 0 "alice lists pods with the role"
as_alice auth can-i list pods
expect_out "yes" "can-i list pods with the role"
as_alice auth can-i delete pods
expect_out "no" "can-i delete pods with the role"
as_alice delete pod nope -n default
expect_rc 1 "alice deletes"
expect_out 'pods "nope" is forbidden: User "alice" cannot delete resource "pods"' "alice deletes"
as_alice get pods -n kube-system
expect_out 'cannot list resource "pods" in API group "" in the namespace "kube-system"' \
    "the role is only for its namespace"
as_alice get configmaps -n default
expect_rc 1 "alice lists configmaps"
as_alice auth can-i --list -n default
expect_rc 0 "can-i --list"
expect_out "pods " "can-i --list shows the role"
expect_out "[get list watch]" "can-i --list shows its verbs"
expect_out "selfsubjectaccessreviews.authorization.k8s.io" "can-i --list shows basic-user"
# The admin asks on alice's behalf: impersonation by system:masters.
k auth can-i list pods -n default --as=alice
expect_out "yes" "admin impersonates alice"
k auth can-i delete pods -n default --as=alice
expect_out "no" "admin impersonates alice (delete)"
# alice may not impersonate, until a ClusterRole lets her impersonate bob.
as_alice get pods -n default --as=bob
expect_rc 1 "alice impersonates bob"
expect_out 'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope' \
    "alice impersonates bob"
k create clusterrole impersonate-bob --verb=impersonate --resource=users --resource-name=bob
k create clusterrolebinding alice-as-bob --clusterrole=impersonate-bob --user=alice
as_alice auth whoami --as=bob
expect_rc 0 "alice as bob"
expect_out "bob" "alice as bob"
as_alice get pods -n default --as=bob
expect_out 'User "bob" cannot list resource "pods"' "bob has no rights of his own"
as_alice get pods --as=system:node:n1
expect_out 'users "system:node:n1" is forbidden' "alice may impersonate bob only"
as_alice get pods --as=bob --as-group=system:masters
expect_out 'groups "system:masters" is forbidden' "alice may not add groups"

# Escalation: alice may write roles, but not grant what she does not hold.
k create role rbac-writer -n default --verb=create,get --resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io
k create rolebinding alice-writes -n default --role=rbac-writer --user=alice
as_alice create role more -n default --verb=get --resource=pods
expect_rc 0 "alice creates a role within her rights"
as_alice create role too-much -n default --verb=delete --resource=pods
expect_rc 1 "alice escalates"
expect_out 'is attempting to grant RBAC permissions not currently held' "alice escalates"
expect_out '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}' "alice escalates: the rule"
as_alice create rolebinding bob-admin -n default --clusterrole=admin --user=bob
expect_rc 1 "alice binds admin"
expect_out 'is attempting to grant RBAC permissions not currently held' "alice binds admin"
as_alice create rolebinding bob-reads -n default --role=pod-reader --user=bob
expect_rc 0 "alice binds what she holds"

# Validation as kube does it.
kubectl create rolebinding bad -n default --role=pod-reader --user=alice --dry-run=client \
    -o json | sed 's/"kind": "User"/"kind": "Robot"/' >"$TMP/rb.json"
k create -f "$TMP/rb.json"
expect_rc 1 "bad subject kind"
expect_out 'subjects[0].kind: Unsupported value: "Robot"' "bad subject kind"
k patch rolebinding alice-reads -n default --type=merge -p '{"roleRef":{"name":"rbac-writer"}}'
expect_rc 1 "roleRef change"
expect_out "cannot change roleRef" "roleRef change"
printf '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"r","namespace":"default"},"rules":[{"verbs":["get"],"nonResourceURLs":["/x"]}]}' >"$TMP/role.json"
k create -f "$TMP/role.json"
expect_out "namespaced rules cannot apply to non-resource URLs" "non-resource URL in a Role"

# Aggregation: a ClusterRole labelled for view widens view, and so edit and admin.
admin_has_nodes() { kubectl get clusterrole admin -o 'jsonpath={.rules[*].resources}' | grep -qw nodes; }
k create clusterrole nodes-view --verb=get --resource=nodes
admin_has_nodes && fail "admin holds nodes before the label"
k label clusterrole nodes-view rbac.authorization.k8s.io/aggregate-to-view=true
wait_for "admin aggregates view's new role" admin_has_nodes
k auth can-i get nodes --as=bob
expect_out "no" "bob cannot read nodes"
k create clusterrolebinding bob-view --clusterrole=view --user=bob
k auth can-i get nodes --as=bob
expect_out "yes" "bob reads nodes through view"

# Every namespace has its default ServiceAccount, new ones too.
k get serviceaccount default -n kube-system -o name
expect_out "serviceaccount/default" "default account of kube-system"
k create namespace team-x
k get serviceaccount default -n team-x -o name
expect_out "serviceaccount/default" "default account of a new namespace"

# ServiceAccount tokens: kubectl create token, then the token as credentials.
k create serviceaccount robot -n default
expect_rc 0 "create serviceaccount"
k create token robot -n default
expect_rc 0 "create token"
tok=$(cat "$TMP/out")
robot() { run kubectl --kubeconfig=/dev/null --server="https://$server" \
    --certificate-authority="$TMP/data/pki/ca.crt" --token="$tok" --request-timeout=20s "$@"; }
robot auth whoami
expect_out "system:serviceaccount:default:robot" "token's user"
expect_out "[system:serviceaccounts system:serviceaccounts:default system:authenticated]" \
    "token's groups"
robot get pods -n default
expect_out 'User "system:serviceaccount:default:robot" cannot list resource "pods"' \
    "robot without a binding"
k create rolebinding robot-reads --role=pod-reader --serviceaccount=default:robot -n default
robot get pods -n default
expect_rc 0 "robot with a binding"
robot get secrets -n default
expect_rc 1 "robot beyond its role"
# TokenReview agrees; a token for another audience authenticates nothing here.
printf '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"%s"}}' \
    "$tok" >"$TMP/tr.json"
k create -f "$TMP/tr.json" -o 'jsonpath={.status.authenticated} {.status.user.username}'
expect_out "true system:serviceaccount:default:robot" "TokenReview of the token"
k create token robot -n default --audience=vault
other=$(cat "$TMP/out")
run kubectl --kubeconfig=/dev/null --server="https://$server" \
    --certificate-authority="$TMP/data/pki/ca.crt" --token="$other" get pods -n default
expect_out "Unauthorized" "token for another audience"
k create token robot -n default --duration=5m
expect_rc 1 "too short a token"
expect_out "may not specify a duration less than 10 minutes" "too short a token"
k create token nobody -n default
expect_out 'serviceaccounts "nobody" not found' "token of a missing account"
# Deleting the account ends its tokens.
k delete serviceaccount robot -n default
robot get pods -n default
expect_out "Unauthorized" "token of a deleted account"

# A restart keeps what was written and creates nothing twice.
kill "$pid"
wait "$pid" 2>/dev/null || true
start_apiserver "$TMP/data" --token-auth-file "$TMP/tokens.csv" --authorization-mode=Node,RBAC
as_alice get pods -n default
expect_rc 0 "alice's role after a restart"
k get clusterrole view -o 'jsonpath={.metadata.labels}'
expect_out "rbac-defaults" "bootstrap labels"
finish
