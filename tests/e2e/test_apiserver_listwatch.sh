#!/bin/bash
# koord apiserver's list and watch semantics through the real kubectl: chunked lists
# (--chunk-size) return everything, pages of one sequence share the first page's
# resourceVersion while writes happen between them, a watch with a label selector replays
# objects starting and stopping to match as ADDED and DELETED, and a resourceVersion the server
# has not reached is a 504 Timeout.
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"
command -v kubectl >/dev/null || { echo "kubectl not installed; skipping"; exit 0; }

# The value of a top-level metadata string field in a JSON body ($TMP/out).
meta() { grep -o "\"$1\":\"[^\"]*\"" "$TMP/out" | head -1 | cut -d'"' -f4; }

start_apiserver "$TMP/data"
mkdir "$TMP/cms"
for i in 0 1 2 3 4; do
    printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c%s"},"data":{"v":"1"}}' \
        "$i" >"$TMP/cms/c$i.json"
done
k create -f "$TMP/cms"
expect_rc 0 "create configmaps"
k get configmaps --chunk-size=2 -o name
expect_rc 0 "chunked list"
for i in 0 1 2 3 4; do expect_out "configmap/c$i" "chunked list"; done

# Paging with a write between the pages: one snapshot.
k get --raw "/api/v1/namespaces/default/configmaps?limit=2"
expect_rc 0 "first page"
rv=$(meta resourceVersion)
token=$(meta continue)
[ -n "$rv" ] && [ -n "$token" ] || fail "first page lacks resourceVersion or continue"
k delete configmap c3
expect_rc 0 "delete between pages"
k get --raw "/api/v1/namespaces/default/configmaps?limit=2&continue=$token"
expect_rc 0 "second page"
expect_out "\"name\":\"c3\"" "second page still shows the deleted object"
[ "$(meta resourceVersion)" = "$rv" ] || fail "second page at $(meta resourceVersion), want $rv"

# Selector transitions, replayed from history.
k label configmap c1 app=x
k label configmap c1 app=y --overwrite
k get --raw "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$rv&labelSelector=app%3Dx&timeoutSeconds=1"
expect_rc 0 "watch with a selector"
expect_out '"type":"ADDED"' "c1 starts matching"
expect_out '"type":"DELETED"' "c1 stops matching"
grep -q '"name":"c3"' "$TMP/out" && fail "c3 never matched but was sent"

# A resourceVersion from the future.
k get --raw "/api/v1/namespaces/default/configmaps?resourceVersion=99999999"
expect_rc 1 "too large resourceVersion"
expect_out "Too large resource version" "too large resourceVersion"
finish
