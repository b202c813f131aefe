#!/bin/bash
# koord apiserver against hostile requests (issue 20 section 2): a JSON patch that copies a
# 1 MiB string 10000 times is refused at the accumulated-copy limit (as kube-apiserver's
# json-patch does) and the server's peak memory barely moves; a request with too many header
# fields, or too many header bytes, is 431 and never served truncated.
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"
command -v kubectl >/dev/null || skip "kubectl not installed"
command -v curl >/dev/null || skip "curl not installed"

printf 'admin-token,admin,1,system:masters\n' >"$TMP/tokens.csv"
start_apiserver "$TMP/data" --token-auth-file "$TMP/tokens.csv"
api() { run curl -sS --insecure -H "Authorization: Bearer admin-token" -o "$TMP/body" \
    -w '%{http_code}' "$@"; }
peak_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$pid/status"; }

# A ConfigMap holding one 1 MiB value.
{
    printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"v":"'
    head -c 1048576 /dev/zero | tr '\0' x
    printf '"}}'
} >"$TMP/big.json"
api -X POST -H "Content-Type: application/json" --data-binary "@$TMP/big.json" \
    "https://$server/api/v1/namespaces/default/configmaps"
expect_out "201" "create the 1 MiB ConfigMap"

# 10000 copies of it: 10 GB if nothing stopped them (a 1.2 MB patch took 6 GB before).
{
    printf '['
    for i in $(seq 0 9999); do
        [ "$i" -gt 0 ] && printf ','
        printf '{"op":"copy","from":"/data/v","path":"/data/c%d"}' "$i"
    done
    printf ']'
} >"$TMP/copy.json"
before=$(peak_kb)
k patch configmap big --type=json --patch-file="$TMP/copy.json"
expect_rc 1 "the copy patch is refused"
expect_out "Unable to complete the copy, the accumulated size increase of copy is" "copy limit"
api -X PATCH -H "Content-Type: application/json-patch+json" --data-binary "@$TMP/copy.json" \
    "https://$server/api/v1/namespaces/default/configmaps/big"
expect_out "422" "the copy patch's status code"
grep -qF '"code":422' "$TMP/body" || fail "422 Status body: $(cat "$TMP/body")"
after=$(peak_kb)
# Both requests together may hold the document, the patch and 3 MiB of copies: far below the
# gigabytes of an unbounded copy.
echo "peak RSS of the server grew by $((after - before)) KiB for the refused copy patch (twice)"
[ $((after - before)) -lt 131072 ] ||
    fail "peak RSS grew by $((after - before)) KiB for a refused copy patch"
k get configmap big -o jsonpath='{.data.c0}'
[ -s "$TMP/out" ] && fail "a refused patch left copies behind"

# Too many header fields: 431 with a Status, whatever the request.
hdrs=()
for i in $(seq 1 300); do hdrs+=(-H "X-Flood-$i: $i"); done
api "${hdrs[@]}" "https://$server/api/v1/namespaces/default/configmaps/big"
expect_out "431" "300 header fields"
grep -qF '"reason":"RequestHeaderFieldsTooLarge"' "$TMP/body" || fail "431 body: $(cat "$TMP/body")"
# Too many header bytes (100 KiB in one field): 431 from libmicrohttpd.
long=$(head -c 102400 /dev/zero | tr '\0' v)
api -H "X-Long: $long" "https://$server/api/v1/namespaces/default/configmaps/big"
expect_out "431" "a 100 KiB header field"
# The server still serves.
k get configmap big -o jsonpath='{.metadata.name}'
expect_out "big" "served after the floods"
finish
