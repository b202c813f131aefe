#!/bin/bash
# koord slo render on the seed-002 template: the anolis node gets the anolis overrides, a plain
# node the cluster strategy; a bad key is reported and keeps its default.
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"
CM=examples/slo-controller-config.yaml

run "$KOORD" slo render --config "$CM" --node examples/nodes/node-anolis.yaml -o json
expect_rc 0 "render anolis"
tr -d ' \n' <"$TMP/out" >"$TMP/anolis"
for want in '"name":"anolis-node"' '"cpuEvictBEUsageThresholdPercent":80' \
    '"policy":"cfsQuotaBurstOnly"' '"cfsQuotaBurstPercent":400' \
    '"beClass":{"cpuQOS":{"enable":false,"groupIdentity":-1},"memoryQOS":{"enable":false,"minLimitPercent":0,"lowLimitPercent":0,"throttlingPercent":0,"wmarkRatio":90' \
    '"minFreeKbytesFactor":100' '"extensions":{"Object":{}}'; do
    grep -qF -- "$want" "$TMP/anolis" || fail "anolis NodeSLO lacks $want: $(cat "$TMP/anolis")"
done

run "$KOORD" slo render --config "$CM" --node examples/nodes/node-plain.yaml -o json
expect_rc 0 "render plain"
tr -d ' \n' <"$TMP/out" >"$TMP/plain"
for want in '"name":"plain-node"' '"cpuEvictBEUsageThresholdPercent":90' '"policy":"none"' \
    '"cfsQuotaBurstPercent":300' '"wmarkRatio":95' '"memoryEvictLowerPercent":65'; do
    grep -qF -- "$want" "$TMP/plain" || fail "plain NodeSLO lacks $want: $(cat "$TMP/plain")"
done
grep -qF '"wmarkRatio":90' "$TMP/plain" && fail "plain node got the anolis wmarkRatio"

# A key with invalid JSON: warning on stderr with the upstream reason; defaults stay.
cat >"$TMP/cm.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: slo-controller-config, namespace: koordinator-system}
data:
  resource-threshold-config: '{"clusterStrategy": {"enable": tru'
YAML
run "$KOORD" slo render --config "$TMP/cm.yaml" --node examples/nodes/node-plain.yaml
expect_rc 0 "render bad key"
expect_out "SLOCfgUnmarshalFailed" "render bad key"
expect_out "failed to unmarshal ThresholdCfg" "render bad key"
expect_out "cpuSuppressThresholdPercent: 65" "render bad key"

run "$KOORD" slo render --config "$CM"
expect_rc 2 "render without --node"
run "$KOORD" slo render --config examples/nodes/node-plain.yaml --node examples/nodes/node-plain.yaml
expect_rc 2 "render with a Node as config"
expect_out "expected a ConfigMap" "render with a Node as config"

run "$KOORD" slo check --config "$CM"
expect_rc 0 "check template"

# Step 6 with real nodes: each example node matches at most one entry per key.
for f in examples/nodes/*.yaml; do cat "$f"; echo "---"; done >"$TMP/nodes.yaml"
run "$KOORD" slo check --config "$CM" --nodes "$TMP/nodes.yaml"
expect_rc 0 "check with nodes"
# A second threshold entry that also matches the anolis node is rejected.
sed 's/"cpuEvictBEUsageThresholdPercent": 80/&}, {"name": "all-linux", "nodeSelector": {"matchLabels": {"kubernetes.io\/hostname": "anolis-node"}}, "enable": true/' \
    "$CM" >"$TMP/cm2.yaml"
run "$KOORD" slo check --config "$TMP/cm2.yaml" --nodes "$TMP/nodes.yaml"
expect_rc 1 "check with a node matching two entries"
expect_out 'ExistNodeConflict: node "anolis-node"' "check with a node matching two entries"
finish
