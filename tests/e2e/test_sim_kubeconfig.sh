#!/bin/bash
# `koord sim --kubeconfig FILE`: one replay against a control plane that is already running,
# set up as `make up` sets it up (scripts/up.sh): koord apiserver; the CRDs, the priority
# classes and upstream's slo-controller-config (deploy/); koord manager registering its
# NodeMetric APIService and admission webhooks; the example ClusterColocationProfile; koord
# scheduler under both scheduler names. The sim replays the small trace (tests/sim/data/small-*:
# 4 nodes, 21 LS and 21 BE pods, two of them too big for any node) with the cluster's own
# colocation setting, its reports going through the API server (aggregation) with the
# kubeconfig's credentials. Checked: the run ends by itself with exit 0 and a report; the
# simulated nodes have NodeMetrics through the aggregated API and batch allocatable from the
# manager; BE pods became batch pods on the cluster's admission path and were placed on batch
# capacity (summary.csv and timeseries.csv); no LS pod was evicted or suppressed.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || skip "kubectl is not installed"
data=$KOORD_SOURCE_DIR/tests/sim/data

start_apiserver "$TMP/data"
mpid="" spid=""
trap 'kill -9 $pid $mpid $spid 2>/dev/null || true; rm -rf "$TMP"' EXIT
k apply -f "$KOORD_SOURCE_DIR/deploy/crds/" -f "$KOORD_SOURCE_DIR/deploy/priorityclasses.yaml"
expect_rc 0 "apply CRDs and priority classes"
printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"koordinator-system"}}' | k create -f -
expect_rc 0 "create koordinator-system"
# The cluster's slo-controller-config: upstream's (deploy/), with the metric intervals a
# compressed trace needs (docs/sim.md, "With --kubeconfig"): reports every 2 s as the sim sends
# them. With upstream's 60 s the scheduler's LoadAware filter would count every pod placed in
# the last minute, an hour of trace at 1000x, at its estimate and refuse the BE pods.
sed 's/"enable": true$/"enable": true, "metricReportIntervalSeconds": 2, "metricAggregateDurationSeconds": 6, "updateTimeThresholdSeconds": 6/' \
    "$KOORD_SOURCE_DIR/deploy/slo-controller-config.yaml" >"$TMP/slo.yaml"
grep -q '"metricReportIntervalSeconds": 2' "$TMP/slo.yaml" || fail "deploy/slo-controller-config.yaml changed shape"
k create -f "$TMP/slo.yaml"
expect_rc 0 "create slo-controller-config"

"$KOORD" manager --kubeconfig "$KUBECONFIG" --listen 127.0.0.1:0 --ready-file "$TMP/mready" \
    --cert-dir "$TMP/m" --register-apiservice 127.0.0.1:0 --webhook-listen 127.0.0.1:0 \
    --register-webhooks 127.0.0.1:0 \
    --leader-election-lease-duration 3 --leader-election-renew-deadline 2 \
    --leader-election-retry-period 1 >>"$TMP/manager.log" 2>&1 &
mpid=$!
wait_for "manager listening" test -s "$TMP/mready"
wait_for "the NodeMetric APIService Available" nodemetrics_available
wait_for "the admission webhooks registered" \
    kubectl get mutatingwebhookconfiguration koordinator-mutating-webhook-configuration
k apply -f "$KOORD_SOURCE_DIR/examples/colocation/colocation-profile.yaml"
expect_rc 0 "apply the ClusterColocationProfile"
"$KOORD" scheduler --kubeconfig "$KUBECONFIG" --scheduler-name koord-scheduler \
    --scheduler-name default-scheduler --listen 127.0.0.1:0 --ready-file "$TMP/sready" \
    >>"$TMP/scheduler.log" 2>&1 &
spid=$!
wait_for "scheduler listening" test -s "$TMP/sready"

# Bad input against a running cluster: two runs cannot share it.
run "$KOORD" sim --kubeconfig "$KUBECONFIG" --nodes "$data/small-nodes.csv" --pods "$data/small-pods.csv"
expect_rc 2 "--kubeconfig with both runs"
expect_out "with --kubeconfig, one run only" "--kubeconfig with both runs"

# 20,000 trace seconds at 1000x: a 20 s run.
run "$KOORD" sim --kubeconfig "$KUBECONFIG" --nodes "$data/small-nodes.csv" \
    --pods "$data/small-pods.csv" --colocation on --seed 7 --speed 1000 --report-interval 2 \
    --out "$TMP/report"
cp "$TMP/out" "$TMP/sim.log"
expect_rc 0 "koord sim --kubeconfig"
expect_out "colocation on" "the summary"
for f in summary.csv timeseries.csv report.html; do
    [ -s "$TMP/report/$f" ] || fail "the report lacks $f"
done
grep -F "metricReportIntervalSeconds" "$TMP/sim.log" &&
    fail "a warning about the report interval, which matches the cluster's"
ls "$TMP" | grep -q '^koord-sim-' && fail "koord sim left a state directory with --kubeconfig"

# The cluster saw the fleet: its Nodes with batch allocatable from the manager, their
# NodeMetrics (the sim's reports, through the API server's aggregation).
for n in 0 1 2 3; do
    node=sim-dash-node-$n
    k get node "$node" -o 'jsonpath={.status.allocatable.kubernetes\.io/batch-cpu}'
    expect_rc 0 "node $node"
    [ -n "$(cat "$TMP/out")" ] && [ "$(cat "$TMP/out")" -gt 0 ] ||
        fail "node $node has no batch-cpu: $(cat "$TMP/out")"
    k get nodemetrics.metrics.koordinator.sh "$node" -o 'jsonpath={.status.nodeMetric.nodeUsage.resources.cpu}'
    expect_rc 0 "the NodeMetric of $node"
    [ -n "$(cat "$TMP/out")" ] || fail "no usage reported for $node"
done

# summary.csv: metric,"colocation on".
row() { grep -E "^\"?$1\"?," "$TMP/report/summary.csv" | sed -E 's/^("[^"]*"|[^,]*),//' | tr -d '"'; }
[ "$(row "pods created")" = "21 LS, 21 BE" ] || fail "pods created: $(row "pods created"), want 21 LS, 21 BE"
[ "$(row "LS pods evicted / suppressed")" = "0 / 0" ] ||
    fail "LS pods evicted / suppressed: $(row "LS pods evicted / suppressed")"
advertised=$(row "batch CPU advertised, mean" | cut -d' ' -f1)
awk -v a="$advertised" 'BEGIN { exit !(a > 0) }' || fail "no batch CPU advertised: $advertised"
used=$(row "batch CPU used by BE pods, mean" | cut -d' ' -f1)
awk -v a="$used" 'BEGIN { exit !(a > 0) }' || fail "no batch CPU used by BE pods: $used"
# timeseries.csv: BE pods ran (16 to 20 of 4 cores fit the 4 nodes' batch capacity next to
# the LS pods) and be-huge (64 cores) was never placed.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
         { if ($col["be_running"] > be) be = $col["be_running"]; last = $col["be_pending"] }
         END { printf "%d %d\n", be, last }' "$TMP/report/timeseries.csv" >"$TMP/ts"
read -r be last <"$TMP/ts"
[ "$be" -ge 10 ] || fail "at most $be BE pods running, want 10 or more"
[ "$last" -ge 1 ] || fail "be-huge (64 cores) was placed: $last BE pods pending at the end"
# The pods the run left in the cluster: BE pods became batch pods through the cluster's
# ClusterColocationProfile (koord-batch, kubernetes.io/batch-cpu instead of cpu).
kubectl get pods -n sim-be -o jsonpath='{range .items[?(@.spec.nodeName)]}{.metadata.name} {.spec.priorityClassName} [{.spec.containers[0].resources.requests.kubernetes\.io/batch-cpu}] [{.spec.containers[0].resources.requests.cpu}]{"\n"}{end}' \
    >"$TMP/be-pods" || fail "listing BE pods"
[ -s "$TMP/be-pods" ] || fail "no bound BE pod left to look at"
while read -r pod prio batch cpu; do
    [ "$prio" = koord-batch ] || fail "BE pod $pod has priority class '$prio', want koord-batch"
    [ "$batch" = "[4k]" ] || fail "BE pod $pod asks batch-cpu $batch, want [4k] (4000 milli-cores)"
    [ "$cpu" = "[]" ] || fail "BE pod $pod still requests cpu $cpu"
done <"$TMP/be-pods"

# A run whose --report-interval is not the cluster's says so (and goes on): one synthetic node,
# one pod of one trace second.
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\nwarn-0,1000,1024,0,0,,LS,Running,0,1,0\n' >"$TMP/one-pod.csv"
run "$KOORD" sim --kubeconfig "$KUBECONFIG" --nodes 1 --pods "$TMP/one-pod.csv" --colocation on \
    --speed 10 --report-interval 3 --out "$TMP/report2"
expect_rc 0 "a run with another report interval"
expect_out "has nodes report every 2 s (metricReportIntervalSeconds), this run every 3 s (--report-interval)" \
    "the warning about the report interval"
cat "$TMP/out" >>"$TMP/sim.log"
grep -q "Sanitizer\|runtime error" "$TMP"/*.log && fail "sanitizer report: $(grep -A20 "Sanitizer\|runtime error" "$TMP"/*.log)"
finish
