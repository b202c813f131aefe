#!/bin/bash
# koord apiserver and the bodies real clients send: kubectl's typed create commands post
# protobuf (application/vnd.kubernetes.protobuf) and must succeed, the objects reading back as
# kubectl wrote them; DeleteOptions in protobuf; YAML bodies and Accept: application/yaml
# through curl; kinds the server does not serve answer its ordinary 404.
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"
command -v kubectl >/dev/null || skip "kubectl not installed"
command -v openssl >/dev/null || skip "openssl not installed"

printf 't0k3n,admin,1,"system:masters"\n' >"$TMP/tokens.csv"
start_apiserver "$TMP/data" --token-auth-file "$TMP/tokens.csv"
api() { run curl -sk -H "Authorization: Bearer t0k3n" "$@"; }
# field RESOURCE NAME JSONPATH: one field of a stored object, as kubectl reads it back
field() { kubectl get "$1" "$2" -o "jsonpath=$3"; }

# The typed commands really send protobuf: prove it for one, from kubectl's own log.
k create namespace team-a -v=8
expect_rc 0 "create namespace"
expect_out "Content-Type: application/vnd.kubernetes.protobuf" "create namespace sends protobuf"
expect_out 'namespace/team-a created' "create namespace"
[ "$(field namespace team-a '{.metadata.name}')" = team-a ] || fail "namespace team-a read back"

k create configmap cfg -n team-a --from-literal=a=1 --from-literal=b='two words'
expect_rc 0 "create configmap"
run kubectl get configmap cfg -n team-a -o json
expect_out '"a": "1"' "configmap data"
expect_out '"b": "two words"' "configmap data"

printf 'bin\000ary\377' >"$TMP/blob"
k create secret generic gen -n team-a --from-literal=user=admin --from-file=blob="$TMP/blob"
expect_rc 0 "create secret generic"
[ "$(kubectl get secret gen -n team-a -o 'jsonpath={.data.blob}')" = "$(base64 -w0 <"$TMP/blob")" ] ||
    fail "secret bytes read back"
[ "$(kubectl get secret gen -n team-a -o 'jsonpath={.type}')" = Opaque ] || fail "secret type"

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/tls.key" -out "$TMP/tls.crt" \
    -subj /CN=example -days 1 2>/dev/null
k create secret tls tls -n team-a --cert="$TMP/tls.crt" --key="$TMP/tls.key"
expect_rc 0 "create secret tls"
[ "$(kubectl get secret tls -n team-a -o 'jsonpath={.type}')" = kubernetes.io/tls ] ||
    fail "tls secret type"
[ "$(kubectl get secret tls -n team-a -o 'jsonpath={.data.tls\.crt}')" = "$(base64 -w0 <"$TMP/tls.crt")" ] ||
    fail "tls certificate read back"

k create secret docker-registry reg -n team-a --docker-server=r.example --docker-username=u \
    --docker-password=p
expect_rc 0 "create secret docker-registry"
kubectl get secret reg -n team-a -o 'jsonpath={.data.\.dockerconfigjson}' | base64 -d >"$TMP/out"
expect_out '"r.example"' "docker config read back"

k create service clusterip web -n team-a --tcp=80:8080
expect_rc 0 "create service clusterip"
run kubectl get service web -n team-a -o json
expect_out '"targetPort": 8080' "clusterip targetPort"
expect_out '"type": "ClusterIP"' "clusterip type"
k create service nodeport np -n team-a --tcp=443:https --node-port=30443
expect_rc 0 "create service nodeport"
run kubectl get service np -n team-a -o json
expect_out '"targetPort": "https"' "nodeport named targetPort"
expect_out '"nodePort": 30443' "nodeport"

k create priorityclass low --value=-5 --description=background --preemption-policy=Never
expect_rc 0 "create priorityclass"
run kubectl get priorityclass low -o json
expect_out '"value": -5' "priorityclass value"
expect_out '"preemptionPolicy": "Never"' "priorityclass policy"
expect_out '"description": "background"' "priorityclass description"

# Workload kinds: decoded from protobuf like the core ones (test_apiserver_workloads.sh has the
# rest of their behaviour).
k create deployment d --image=nginx --replicas=3 -n team-a
expect_rc 0 "create deployment"
run kubectl get deployment d -n team-a -o jsonpath='{.spec.replicas} {.spec.selector.matchLabels.app} {.spec.template.spec.containers[0].image}'
expect_out "3 d nginx" "deployment decoded from protobuf"
k create job j --image=busybox -n team-a -- echo hi
expect_rc 0 "create job"
run kubectl get job j -n team-a -o jsonpath='{.spec.template.spec.restartPolicy} {.spec.template.spec.containers[0].command}'
expect_out 'Never ["echo","hi"]' "job decoded from protobuf"

# ServiceAccounts are served (their protobuf body decodes like the others).
k create serviceaccount sa -n team-a
expect_rc 0 "create serviceaccount"
expect_out "serviceaccount/sa created" "create serviceaccount"

# Kinds koord does not serve: the server's ordinary 404 for the resource, never a decoder
# error (the body is not even read).
for cmd in "quota q --hard=pods=1"; do
    # shellcheck disable=SC2086
    k create $cmd -n team-a
    expect_rc 1 "create $cmd"
    expect_out "the server could not find the requested resource" "create $cmd"
done

# DeleteOptions bodies: kubectl delete sends JSON; client-go's typed Delete sends protobuf
# (drain --disable-eviction), built here byte by byte: Unknown{typeMeta{v1, DeleteOptions}, raw}.
delete_options() { # RAW-BYTES-AS-PRINTF-ESCAPES LENGTH
    printf "k8s\\000\\x0a\\x13\\x0a\\x02v1\\x12\\x0dDeleteOptions\\x12\\x$2$1\\x1a\\x00\\x22\\x00" \
        >"$TMP/opts.pb"
}
pb_delete() {
    api -X DELETE -H "Content-Type: application/vnd.kubernetes.protobuf" \
        --data-binary @"$TMP/opts.pb" "https://$server/api/v1/namespaces/team-a/configmaps/cfg"
}
delete_options '\x12\x07\x0a\x05wrong' 09 # preconditions.uid = "wrong"
pb_delete
expect_out '"code":409' "protobuf DeleteOptions precondition"
delete_options '\x2a\x03All' 05 # dryRun: [All]
pb_delete
expect_out '"status":"Success"' "protobuf DeleteOptions dry run"
kubectl get configmap cfg -n team-a >/dev/null 2>&1 || fail "dry-run delete removed the configmap"
printf 'k8s\000\x0a' >"$TMP/opts.pb"
pb_delete
expect_out '"code":400' "truncated protobuf DeleteOptions"
expect_out 'truncated' "truncated protobuf DeleteOptions"
kubectl get configmap cfg -n team-a >/dev/null 2>&1 || fail "a bad body deleted the configmap"
delete_options '\x08\x00\x22\x0aBackground' 0e # gracePeriodSeconds 0, propagation Background
pb_delete
expect_out '"status":"Success"' "protobuf DeleteOptions delete"
kubectl get configmap cfg -n team-a >/dev/null 2>&1 && fail "configmap still there after delete"
k create configmap cfg2 -n team-a --from-literal=a=1
k delete configmap cfg2 -n team-a
expect_rc 0 "kubectl delete configmap"
expect_out 'configmap "cfg2" deleted' "kubectl delete configmap"

# Protobuf the server cannot decode: a custom resource's kind (415, naming it), and garbage (400).
printf 'k8s\000\x0a\x1b\x0a\x15slo.koordinator.sh/v1\x12\x02Xx\x12\x00' >"$TMP/cr.pb"
api -H "Content-Type: application/vnd.kubernetes.protobuf" --data-binary @"$TMP/cr.pb" \
    "https://$server/api/v1/namespaces/team-a/configmaps"
expect_out '"code":415' "protobuf of a kind without a table"
expect_out 'kind Xx in version slo.koordinator.sh/v1 cannot be decoded from protobuf' "415 names the kind"
api -H "Content-Type: application/vnd.kubernetes.protobuf" --data-binary '{"kind":"ConfigMap"}' \
    "https://$server/api/v1/namespaces/team-a/configmaps"
expect_out '"code":400' "protobuf without its magic"
expect_out 'expected prefix [107 56 115 0]' "protobuf without its magic"
api -H "Content-Type: text/plain" --data-binary 'x' "https://$server/api/v1/namespaces/team-a/configmaps"
expect_out '"code":415' "unknown body type"
expect_out 'application/vnd.kubernetes.protobuf' "415 lists the accepted types"

# YAML: a body, and answers (objects, lists, errors) as kubectl -o yaml would read them.
# (YAML 1.1 as sigs.k8s.io/yaml reads it: a plain `on:` key is "true", a plain yes is true.)
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  on: "yes"\n  n: "1"\n' \
    >"$TMP/cm.yaml"
api -H "Content-Type: application/yaml" --data-binary @"$TMP/cm.yaml" \
    "https://$server/api/v1/namespaces/team-a/configmaps"
expect_out '"name":"from-yaml"' "create from a YAML body"
[ "$(kubectl get configmap from-yaml -n team-a -o 'jsonpath={.data.true}')" = yes ] || fail "YAML body data"
[ "$(kubectl get configmap from-yaml -n team-a -o 'jsonpath={.data.false}')" = 1 ] || fail "YAML body data"
api -H "Content-Type: application/yaml" --data-binary $'a: 1\n---\nb: 2\n' \
    "https://$server/api/v1/namespaces/team-a/configmaps"
expect_out 'more than one YAML document' "two YAML documents"
api -H "Content-Type: application/yaml" --data-binary $'a: [1\n' \
    "https://$server/api/v1/namespaces/team-a/configmaps"
expect_out 'not valid YAML: line' "malformed YAML"
api -D "$TMP/headers" -H "Accept: application/yaml" \
    "https://$server/api/v1/namespaces/team-a/configmaps/from-yaml"
expect_out 'kind: ConfigMap' "YAML answer"
expect_out '  name: from-yaml' "YAML answer"
expect_out '  "true": "yes"' "YAML answer quotes what would not read back"
grep -qi '^content-type: application/yaml' "$TMP/headers" || fail "YAML answer Content-Type"
cp "$TMP/out" "$TMP/get.yaml"
kubectl get configmap from-yaml -n team-a -o json --show-managed-fields >"$TMP/get.json"
if python3 -c 'import yaml' 2>/dev/null; then
    python3 -c 'import sys, json, yaml
sys.exit(yaml.safe_load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' \
        "$TMP/get.yaml" "$TMP/get.json" || fail "the YAML answer differs from the JSON one"
fi
api -H "Accept: application/yaml" "https://$server/api/v1/namespaces/team-a/configmaps"
expect_out 'kind: ConfigMapList' "YAML list"
expect_out '- apiVersion: v1' "YAML list items"
api -H "Accept: application/yaml" "https://$server/api/v1/namespaces/team-a/configmaps/nope"
expect_out 'kind: Status' "YAML error"
expect_out 'code: 404' "YAML error"
api -H "Accept: application/yaml" "https://$server/api/v1/namespaces/team-a/configmaps?watch=1"
expect_out '"code":406' "YAML watch refused"

finish
