#!/bin/bash
# The `koord sim` HTML report in a real browser (issue 19 §3): the report of two made-up runs
# ($KOORD_TEST_SIM_REPORT, the writer `koord sim` uses) opened from disk in headless chromium,
# offline: every chart drawn by the inlined uPlot, nothing fetched, no script error, a run name
# that tries to end the data's script element shown as text (report.cjs). The screenshot is
# kept under the build directory. No browser is not a skip: `make deps` installs it.
. "$(dirname "$0")/lib.sh"
: "${KOORD_TEST_SIM_REPORT:?KOORD_TEST_SIM_REPORT must point at koord_test_sim_report}"
need_browser

run "$KOORD_TEST_SIM_REPORT"
expect_rc 0 "write the sample report"
cp "$TMP/out" "$TMP/report.html"
shot="$ARTEFACTS/sim-report.png"
rm -f "$shot"
run env REPORT="$TMP/report.html" SHOT="$shot" CHROMIUM="$CHROMIUM" \
    node "$KOORD_SOURCE_DIR/tests/e2e/report.cjs"
expect_rc 0 "the report in chromium"
cat "$TMP/out"
[ -s "$shot" ] || fail "no screenshot at $shot"
finish
