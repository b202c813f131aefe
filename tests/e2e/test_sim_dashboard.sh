#!/bin/bash
# koord manager's /ui dashboard under a simulation (issue 19 §4): a small `koord sim`
# (tests/sim/data/small-*.csv: 4 nodes of 32 cores, 20 LS pods of 5 cores, 20 BE pods of 4 cores
# arriving over the first 200 trace seconds, one pod of each class too big for any node) runs
# with colocation on and a steady usage model (no diurnal swing, noise or random spikes, so that
# figures hold still between reports) and a --surge at trace seconds 1600-2000 (wall seconds
# 20-25 at --speed 80) that makes the agent stand-ins suppress and evict BE pods. While it runs,
# headless chromium (Debian's, driven by playwright-core: dashboard_sim.cjs) opens the address
# the sim logs ("dashboard: https://.../ui/"), logs in with a `kubectl create token` token and
# checks the page against what kubectl says at that moment: a row per simulated node with the
# Node's allocatable and batch allocatable and its NodeMetric's LS and batch usage, the cluster
# totals, the pending pods by class with the scheduler's reason, and the evictions and
# suppressions the agent stand-ins recorded. The screenshot is kept under the build directory.
# Then Ctrl-C (SIGINT) stops the sim: it says so, exits 1 (stopped early) and still writes its
# report.
#
# test_manager_dashboard.sh stays: it feeds exact figures by hand and checks the login edge
# cases, caching and a clean stop with a stream open; this one is the page under a real run.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || skip "kubectl is not installed"
need_browser
data=$KOORD_SOURCE_DIR/tests/sim/data
state=$TMP/state

# The trace is long (20,000 trace seconds: over 4 minutes at --speed 80); the test ends the run.
"$KOORD" sim --nodes "$data/small-nodes.csv" --pods "$data/small-pods.csv" --colocation on \
    --seed 7 --speed 80 --report-interval 2 --ls-cpu-amplitude 0 --ls-cpu-noise 0 \
    --spike-prob 0 --surge 1600:2000 --spike-height 0.8 --state-dir "$state" --keep \
    --out "$TMP/report" >"$TMP/sim.log" 2>&1 &
simpid=$!
trap 'kill $simpid 2>/dev/null || true; wait $simpid 2>/dev/null || true; rm -rf "$TMP"' EXIT

# The address the sim logs once its control plane is up (the start of an apiserver, a manager
# and a scheduler: 90 s at most on a loaded machine).
dashboard() { sed -n 's/.*dashboard: \(https:[^ ]*\/ui\/\) .*/\1/p' "$TMP/sim.log" | head -n 1; }
for _ in $(seq 1 900); do
    [ -n "$(dashboard)" ] && break
    kill -0 $simpid 2>/dev/null || break
    sleep 0.1
done
url=$(dashboard)
[ -n "$url" ] || { cat "$TMP/sim.log"; fail "no dashboard address in the sim's log"; finish; }
grep -qF "kubectl --kubeconfig $state/on/kubeconfig create token" "$TMP/sim.log" ||
    fail "the log does not say how to get a token: $(grep dashboard: "$TMP/sim.log")"
grep -qF "$url" <<<"https://$(cat "$state/on/manager.ready")/ui/" ||
    fail "the logged address $url is not the manager's ($(cat "$state/on/manager.ready"))"
export KUBECONFIG=$state/on/kubeconfig

k create token default -n default
expect_rc 0 "kubectl create token"
token=$(cat "$TMP/out")

shot="$ARTEFACTS/sim-dashboard.png"
rm -f "$shot"
run env UI_URL="$url" UI_TOKEN="$token" UI_SHOT="$shot" CHROMIUM="$CHROMIUM" \
    node "$KOORD_SOURCE_DIR/tests/e2e/dashboard_sim.cjs"
cat "$TMP/out"
expect_rc 0 "the dashboard under koord sim, in chromium"
[ -s "$shot" ] || fail "no screenshot at $shot"
kill -0 $simpid 2>/dev/null || fail "koord sim ended before the test stopped it: $(tail -n 20 "$TMP/sim.log")"

# Ctrl-C: the replay and its control plane stop, the report of what ran is written, and the
# exit status is 1, a run that did not reach the end of its trace (docs/cli.md).
kill -INT $simpid
rc=0
wait $simpid || rc=$?
[ "$rc" -eq 1 ] || { tail -n 40 "$TMP/sim.log"; fail "koord sim exited $rc on SIGINT, want 1"; }
grep -q "koord sim: colocation on stopped before the end of the trace; the report covers what ran" "$TMP/sim.log" ||
    fail "no word of the stop: $(tail -n 5 "$TMP/sim.log")"
grep -q "colocation on" "$TMP/sim.log" || fail "no summary printed on SIGINT"
for f in summary.csv timeseries.csv report.html; do
    [ -s "$TMP/report/$f" ] || fail "the report lacks $f after SIGINT"
done
# summary.csv: metric,"colocation on"; the run was cut short, but what ran is in it.
row() { grep -E "^\"?$1\"?," "$TMP/report/summary.csv" | sed -E 's/^("[^"]*"|[^,]*),//' | tr -d '"'; }
[ "$(row "pods created")" = "21 LS, 21 BE" ] || fail "pods created: $(row "pods created"), want 21 LS, 21 BE"
[ "$(row "LS pods evicted / suppressed")" = "0 / 0" ] ||
    fail "LS pods evicted / suppressed: $(row "LS pods evicted / suppressed")"
row "BE pods evicted" | grep -Eq '^[1-9][0-9]* \(cpu [1-9]' ||
    fail "no BE eviction by BECPUEvict in summary.csv: $(row "BE pods evicted")"
pgrep -f "$state/on" >/dev/null && fail "a child of koord sim still runs: $(pgrep -af "$state/on")"
grep -q "Sanitizer\\|runtime error" "$state"/on/*.log "$TMP/sim.log" &&
    fail "sanitizer report: $(grep -A20 "Sanitizer\\|runtime error" "$state"/on/*.log "$TMP/sim.log")"
finish
