# Shared helpers for the e2e scripts: each runs the real koord binary ($KOORD) on files in the
# source tree ($KOORD_SOURCE_DIR) and fails with a message naming what differed.
set -eu
: "${KOORD:?KOORD must point at the koord binary}"
: "${KOORD_SOURCE_DIR:?KOORD_SOURCE_DIR must point at the source tree}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# kubectl's discovery cache is keyed by host:port and kept for hours: a random port another
# test used before would bring that server's groups along. Each test has its own.
export KUBECACHEDIR="$TMP/kube-cache"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# run CMD...: captures stdout+stderr in $TMP/out and the exit status in $rc.
run() { set +e; "$@" >"$TMP/out" 2>&1; rc=$?; set -e; }
expect_rc() { [ "$rc" -eq "$1" ] || fail "$2: exit $rc, want $1; output:$(printf '\n'; cat "$TMP/out")"; }
expect_out() { grep -qF -- "$1" "$TMP/out" || fail "$2: output lacks '$1'; output:$(printf '\n'; cat "$TMP/out")"; }
# skip WHY: the test cannot run here (a tool or privilege missing); CTest reports it as skipped.
skip() { echo "SKIP: $*"; exit 77; }
finish() { [ "$fails" -eq 0 ] || { echo "$fails failure(s)" >&2; exit 1; }; echo "all passed"; }
# need_browser: what the browser tests drive: headless chromium ($CHROMIUM, Debian's by default),
# node and playwright-core in web/node_modules. A missing one fails the test, naming it: `make
# deps` installs them all, so no browser is not a skip. Sets $ARTEFACTS, the directory under the
# build tree where the screenshots are kept, and makes it.
need_browser() {
    CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
    [ -x "$CHROMIUM" ] || { echo "FAIL: $CHROMIUM is missing: run \`make deps\` (installs Debian's chromium)" >&2; exit 1; }
    command -v node >/dev/null || { echo "FAIL: node is missing: run \`make deps\`" >&2; exit 1; }
    [ -d "$KOORD_SOURCE_DIR/web/node_modules/playwright-core" ] ||
        { echo "FAIL: web/node_modules/playwright-core is missing: run \`make deps\`" >&2; exit 1; }
    ARTEFACTS=$(dirname "$KOORD")/test-artefacts
    mkdir -p "$ARTEFACTS"
}

# start_apiserver DATA_DIR [EXTRA FLAGS...]: starts `koord apiserver` on a free port in the
# background ($pid), waits until it is serving, and points kubectl at it ($KUBECONFIG,
# $server = host:port). Output goes to $TMP/server.log.
start_apiserver() {
    local dir=$1
    shift
    rm -f "$TMP/ready"
    "$KOORD" apiserver --data-dir "$dir" --listen 127.0.0.1:0 --ready-file "$TMP/ready" \
        --write-kubeconfig "$TMP/kubeconfig" "$@" >>"$TMP/server.log" 2>&1 &
    pid=$!
    trap 'kill -9 $pid 2>/dev/null || true; rm -rf "$TMP"' EXIT
    export KUBECONFIG="$TMP/kubeconfig"
    for _ in $(seq 1 200); do
        [ -s "$TMP/ready" ] && { server=$(cat "$TMP/ready"); return 0; }
        kill -0 "$pid" 2>/dev/null || { cat "$TMP/server.log"; fail "server exited"; return 1; }
        sleep 0.05
    done
    fail "server not ready after 10 s"
}
# start_node_apiserver: start_apiserver on $TMP/data that also takes node-a's bearer token
# tok-a (user system:node:node-a, what an agent on node-a presents), with the CRDs and the
# priority classes applied: the setup of the agent tests.
start_node_apiserver() {
    printf '%s\n' 'tok-a,system:node:node-a,uid-a,"system:nodes"' >"$TMP/tokens.csv"
    start_apiserver "$TMP/data" --token-auth-file "$TMP/tokens.csv" || return 1
    k apply -f "$KOORD_SOURCE_DIR/deploy/crds/" -f "$KOORD_SOURCE_DIR/deploy/priorityclasses.yaml"
    expect_rc 0 "apply CRDs and priority classes"
}
# wait_for DESC CMD...: retries CMD every 0.1 s for up to 30 s; on failure names DESC and shows
# the end of every log in $TMP.
wait_for() {
    local desc=$1
    shift
    for _ in $(seq 1 300); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    fail "$desc (30 s)"
    tail -n 20 "$TMP"/*.log >&2 || true
    return 1
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# token_kubeconfig FILE TOKEN: a kubeconfig for the server of start_apiserver (data dir
# $TMP/data, whose CA signs its certificate) that authenticates with the bearer TOKEN, as a
# node's credentials would.
token_kubeconfig() {
    cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://$server", certificate-authority: "$TMP/data/pki/ca.crt"}}]
users: [{name: u, user: {token: $2}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
EOF
}
# nodemetrics_available: the APIService of koord manager's NodeMetric API is Available.
nodemetrics_available() {
    [ "$(kubectl get apiservice v1alpha1.metrics.koordinator.sh \
        -o jsonpath='{.status.conditions[?(@.type=="Available")].status}')" = True ]
}
# k ARGS...: kubectl against the server, through run.
k() { run kubectl --request-timeout=20s "$@"; }
