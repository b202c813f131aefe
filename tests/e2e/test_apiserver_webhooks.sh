#!/bin/bash
# Dynamic admission in `koord apiserver` with the real kubectl and a real HTTPS webhook
# (tests/tools/webhook_server.c, $KOORD_TEST_WEBHOOK): invalid configurations refused with field
# paths; a mutating webhook labels pods (namespaceSelector and objectSelector exclude others); a
# validating webhook reached through a Service and its Endpoints refuses with kube-apiserver's
# words and nothing is stored; warnings reach kubectl; pods/status writes are matched apart
# from pod writes; a webhook that is down refuses under Fail and is skipped under Ignore; a slow
# webhook is cut off at timeoutSeconds; the review carries what kube-apiserver sends; dry runs;
# the admission metrics.
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"
command -v kubectl >/dev/null || { echo "kubectl not installed; skipping"; exit 0; }
: "${KOORD_TEST_WEBHOOK:?KOORD_TEST_WEBHOOK must point at koord_test_webhook}"

start_apiserver "$TMP/data"
"$KOORD_TEST_WEBHOOK" --cert-dir "$TMP/wh" --ready-file "$TMP/wh-ready" --log "$TMP/reviews" \
    --dns-name whsvc.default.svc >"$TMP/webhook.log" 2>&1 &
whpid=$!
trap 'kill -9 $pid $whpid 2>/dev/null || true; rm -rf "$TMP"' EXIT
wait_for "webhook server ready" test -s "$TMP/wh-ready"
port=$(cat "$TMP/wh-ready")
ca=$(base64 -w0 "$TMP/wh/webhook-ca.crt")
# A port nothing listens on: bound by a short-lived listener, then freed.
down=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# ---- invalid configurations: refused with field paths, nothing stored ----
cat >"$TMP/bad.yaml" <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: bad}
webhooks:
- name: short.name
  clientConfig: {url: "http://127.0.0.1:$port/allow"}
  rules: [{operations: ["CREATE", "*"], apiGroups: [""], apiVersions: ["v1"], resources: ["*/*", "pods"]}]
  admissionReviewVersions: ["v2"]
  timeoutSeconds: 31
- name: dup.koord.test
  clientConfig: {url: "https://127.0.0.1:$port/allow", service: {namespace: default, name: whsvc}}
  sideEffects: None
  admissionReviewVersions: ["v1"]
- name: dup.koord.test
  clientConfig: {url: "https://127.0.0.1:$port/allow?x=1"}
  sideEffects: Some
  admissionReviewVersions: ["v1"]
EOF
k create -f "$TMP/bad.yaml"
[ "$rc" -ne 0 ] || fail "invalid configuration accepted"
expect_out 'webhooks[0].name: Invalid value: "short.name": should be a domain with at least three segments separated by dots' "name"
expect_out "webhooks[0].clientConfig.url: Invalid value: \"http://127.0.0.1:$port/allow\": 'https' is the only allowed URL scheme" "url scheme"
expect_out "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun" "sideEffects required"
expect_out "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds" "timeout"
expect_out "webhooks[0].admissionReviewVersions: Invalid value" "review versions"
expect_out "must include at least one of v1, v1beta1" "review versions message"
expect_out "webhooks[0].rules[0].operations: Invalid value" "operations star"
expect_out "if '*' is present, must not specify other operations" "operations message"
expect_out "if '*/*' is present, must not specify other resources" "resources"
expect_out "webhooks[1].clientConfig: Required value: exactly one of url or service is required" "url and service"
expect_out 'webhooks[2].name: Duplicate value: "dup.koord.test"' "duplicate name"
expect_out "webhooks[2].clientConfig.url: Invalid value: \"https://127.0.0.1:$port/allow?x=1\": query parameters are not permitted in the URL" "url query"
expect_out 'webhooks[2].sideEffects: Unsupported value: "Some"' "sideEffects Some"
k get validatingwebhookconfigurations bad
expect_rc 1 "invalid configuration stored"

# ---- the configurations ----
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: hooked, labels: {wh: "on"}}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: plain}\n' >"$TMP/ns.yaml"
k create -f "$TMP/ns.yaml"
expect_rc 0 "namespaces"
cat >"$TMP/hooks.yaml" <<EOF
apiVersion: v1
kind: Service
metadata: {name: whsvc, namespace: default}
spec:
  ports: [{name: https, port: 443, targetPort: $port}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: whsvc, namespace: default}
subsets:
- addresses: [{ip: 127.0.0.1}]
  ports: [{name: https, port: $port}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: a-label}
webhooks:
- name: label.koord.test
  clientConfig: {url: "https://127.0.0.1:$port/label", caBundle: "$ca"}
  rules: [{operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"]}]
  namespaceSelector: {matchLabels: {wh: "on"}}
  objectSelector: {matchExpressions: [{key: skip, operator: DoesNotExist}]}
  sideEffects: None
  admissionReviewVersions: ["v1"]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: b-down}
webhooks:
- name: down-fail.koord.test
  clientConfig: {url: "https://127.0.0.1:$down/allow", caBundle: "$ca"}
  rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]
  objectSelector: {matchLabels: {down: fail}}
  sideEffects: None
  admissionReviewVersions: ["v1"]
- name: broken.koord.test
  clientConfig: {url: "https://127.0.0.1:$port/broken", caBundle: "$ca"}
  rules: [{operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"]}]
  objectSelector: {matchLabels: {broken: "yes"}}
  sideEffects: None
  admissionReviewVersions: ["v1"]
- name: down-ignore.koord.test
  clientConfig: {url: "https://127.0.0.1:$down/allow", caBundle: "$ca"}
  rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]
  objectSelector: {matchLabels: {down: ignore}}
  failurePolicy: Ignore
  sideEffects: None
  admissionReviewVersions: ["v1"]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: c-status}
webhooks:
- name: status-label.koord.test
  clientConfig: {url: "https://127.0.0.1:$port/label", caBundle: "$ca"}
  rules: [{operations: ["UPDATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods/status"]}]
  objectSelector: {matchLabels: {statuslabel: "yes"}}
  sideEffects: None
  admissionReviewVersions: ["v1"]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: checks}
webhooks:
- name: deny.koord.test
  clientConfig:
    service: {namespace: default, name: whsvc, path: /deny}
    caBundle: "$ca"
  rules: [{operations: ["CREATE", "UPDATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"], scope: Namespaced}]
  objectSelector: {matchLabels: {deny: "yes"}}
  sideEffects: None
  admissionReviewVersions: ["v1"]
- name: warn.koord.test
  clientConfig: {url: "https://127.0.0.1:$port/warn", caBundle: "$ca"}
  rules: [{operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"]}]
  objectSelector: {matchLabels: {warn: "yes"}}
  sideEffects: None
  admissionReviewVersions: ["v1"]
- name: status.koord.test
  clientConfig: {url: "https://127.0.0.1:$port/deny-bare", caBundle: "$ca"}
  rules: [{operations: ["UPDATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods/status"]}]
  objectSelector: {matchLabels: {statusdeny: "yes"}}
  sideEffects: None
  admissionReviewVersions: ["v1"]
- name: bind.koord.test
  clientConfig: {url: "https://127.0.0.1:$port/deny", caBundle: "$ca"}
  rules: [{operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods/binding"]}]
  namespaceSelector: {matchLabels: {wh: "on"}}
  sideEffects: None
  admissionReviewVersions: ["v1"]
- name: slow.koord.test
  clientConfig: {url: "https://127.0.0.1:$port/slow", caBundle: "$ca"}
  rules: [{operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"]}]
  objectSelector: {matchLabels: {slow: "yes"}}
  timeoutSeconds: 1
  sideEffects: None
  admissionReviewVersions: ["v1"]
EOF
k apply -f "$TMP/hooks.yaml"
expect_rc 0 "apply webhook configurations"
# Defaults as kube-apiserver applies them.
k get validatingwebhookconfiguration checks -o 'jsonpath={.webhooks[1].failurePolicy}/{.webhooks[1].matchPolicy}/{.webhooks[1].timeoutSeconds}/{.webhooks[1].namespaceSelector}/{.webhooks[1].rules[0].scope}/{.webhooks[0].clientConfig.service.port}'
expect_out 'Fail/Equivalent/10/{}/*/443' "defaults"
k get mutatingwebhookconfiguration a-label -o 'jsonpath={.webhooks[0].reinvocationPolicy}'
expect_out 'Never' "reinvocationPolicy default"
k get mutatingwebhookconfigurations
expect_out "WEBHOOKS" "table columns"
grep -Eq '^b-down +3 ' "$TMP/out" || fail "webhook count column: $(cat "$TMP/out")"

# ---- a mutating webhook labels pods of selected namespaces ----
k run p1 -n hooked --image=busybox --restart=Never
expect_rc 0 "create p1"
k get pod p1 -n hooked -o 'jsonpath={.metadata.labels.webhook}'
expect_out "mutated" "label added by the mutating webhook"
grep -q '"path":"/label"' "$TMP/reviews" || fail "label webhook never called"
# What the review carried.
line=$(grep '"path":"/label"' "$TMP/reviews" | head -1)
for want in '"operation":"CREATE"' '"namespace":"hooked"' '"name":"p1"' \
    '"kind":{"group":"","version":"v1","kind":"Pod"}' \
    '"resource":{"group":"","version":"v1","resource":"pods"}' '"dryRun":false' \
    '"kind":"CreateOptions"' '"system:authenticated"' '"oldObject":null'; do
    case "$line" in *"$want"*) ;; *) fail "review lacks $want: $line" ;; esac
done
# namespaceSelector and objectSelector exclude.
k run p2 -n plain --image=busybox --restart=Never
k get pod p2 -n plain -o 'jsonpath={.metadata.labels}'
grep -q mutated "$TMP/out" && fail "namespaceSelector did not exclude: $(cat "$TMP/out")"
k run p3 -n hooked --image=busybox --restart=Never --labels=skip=yes
k get pod p3 -n hooked -o 'jsonpath={.metadata.labels}'
grep -q mutated "$TMP/out" && fail "objectSelector did not exclude: $(cat "$TMP/out")"
# A server-side dry run is reviewed as one and shows the mutation; nothing is stored.
k run p4 -n hooked --image=busybox --restart=Never --dry-run=server -o 'jsonpath={.metadata.labels.webhook}'
expect_out "mutated" "dry run mutated"
grep '"path":"/label"' "$TMP/reviews" | grep '"name":"p4"' | grep -q '"dryRun":true' ||
    fail "dry-run review without dryRun true"
k get pod p4 -n hooked
expect_rc 1 "dry run stored"

# ---- a validating webhook through a Service denies; nothing is stored ----
k run bad-1 -n hooked --image=busybox --restart=Never --labels=deny=yes
expect_rc 1 "denied create"
expect_out 'admission webhook "deny.koord.test" denied the request: pods named bad-* are not welcome' "denial message"
k get pod bad-1 -n hooked
expect_rc 1 "denied pod stored"
# The status code is the webhook's.
run kubectl --request-timeout=20s -v=6 run bad-2 -n hooked --image=busybox --restart=Never --labels=deny=yes
expect_out "403 Forbidden" "denial status code"
# Updates are reviewed too (label a pod into the selector: the old object matches not, the new does).
k label pod p1 -n hooked deny=yes
expect_rc 1 "denied update"
expect_out 'admission webhook "deny.koord.test" denied the request' "update denial"
k get pod p1 -n hooked -o 'jsonpath={.metadata.labels.deny}'
[ -z "$(cat "$TMP/out")" ] || fail "denied update stored: $(cat "$TMP/out")"

# A pods/binding create is reviewed with the Binding as its object.
printf '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p1"},"target":{"kind":"Node","name":"n1"}}' >"$TMP/binding.json"
k create --raw /api/v1/namespaces/hooked/pods/p1/binding -f "$TMP/binding.json"
expect_rc 1 "denied binding"
expect_out 'admission webhook "bind.koord.test" denied the request: pods named bad-* are not welcome' "binding denial"
grep '"path":"/deny"' "$TMP/reviews" | grep '"subResource":"binding"' | grep -q '"kind":{"group":"","version":"v1","kind":"Binding"}' ||
    fail "binding review without subResource binding and kind Binding"
k get pod p1 -n hooked -o 'jsonpath={.spec.nodeName}'
[ -z "$(cat "$TMP/out")" ] || fail "denied binding stored: $(cat "$TMP/out")"

# ---- warnings reach kubectl ----
k run w1 -n plain --image=busybox --restart=Never --labels=warn=yes
expect_rc 0 "create with a warning"
expect_out 'Warning: koord test warning' "warning header"

# ---- pods/status is matched apart from pods ----
k run s1 -n plain --image=busybox --restart=Never --labels=statusdeny=yes
expect_rc 0 "create s1 (pods/status rule does not match a pod create)"
k label pod s1 -n plain more=yes
expect_rc 0 "pod update not matched by the pods/status rule"
k patch pod s1 -n plain --subresource=status --type=merge -p '{"status":{"phase":"Running"}}'
expect_rc 1 "status write denied"
expect_out 'admission webhook "status.koord.test" denied the request without explanation' "status denial"
grep '"path":"/deny-bare"' "$TMP/reviews" | grep -q '"subResource":"status"' ||
    fail "status review without subResource"
grep '"path":"/deny-bare"' "$TMP/reviews" | grep -q '"oldObject":{' ||
    fail "status review without oldObject"

# A mutating webhook on pods/status is called, but only the status it leaves is stored (the
# status strategy's PrepareForUpdate): its label on the pod is dropped.
k run s2 -n plain --image=busybox --restart=Never --labels=statuslabel=yes
k patch pod s2 -n plain --subresource=status --type=merge -p '{"status":{"phase":"Running"}}'
expect_rc 0 "status write through a mutating webhook"
grep '"path":"/label"' "$TMP/reviews" | grep -q '"name":"s2"' || fail "status-label webhook not called"
k get pod s2 -n plain -o 'jsonpath={.status.phase}/{.metadata.labels.webhook}'
expect_out "Running/" "status stored, webhook label dropped"
grep -q "Running/mutated" "$TMP/out" && fail "a status write changed the pod's labels"

# ---- a webhook that is down: Fail refuses, Ignore admits ----
k run d1 -n plain --image=busybox --restart=Never --labels=down=fail
expect_rc 1 "Fail with the webhook down"
expect_out "Internal error occurred: failed calling webhook \"down-fail.koord.test\": failed to call webhook: Post \"https://127.0.0.1:$down/allow?timeout=10s\": dial tcp 127.0.0.1:$down: connect: connection refused" "down message"
k get pod d1 -n plain
expect_rc 1 "refused pod stored"
k run d2 -n plain --image=busybox --restart=Never --labels=down=ignore
expect_rc 0 "Ignore with the webhook down"
grep -q 'failed calling webhook .*down-ignore.koord.test' "$TMP/server.log" ||
    fail "ignored failure not logged"

# A webhook answering 500: client-go's words for it.
k run b1 -n plain --image=busybox --restart=Never --labels=broken=yes
expect_rc 1 "broken webhook"
expect_out 'Internal error occurred: failed calling webhook "broken.koord.test": failed to call webhook: an error on the server ("broken on purpose") has prevented the request from succeeding' "non-200 message"

# ---- timeoutSeconds ----
t0=$(now_ms)
k run slow-1 -n plain --image=busybox --restart=Never --labels=slow=yes
t1=$(now_ms)
expect_rc 1 "slow webhook"
expect_out "failed calling webhook \"slow.koord.test\": failed to call webhook: Post \"https://127.0.0.1:$port/slow?timeout=1s\": context deadline exceeded" "timeout message"
[ $((t1 - t0)) -lt 2900 ] || fail "the 1 s timeout was not honoured: $((t1 - t0)) ms (webhook sleeps 3 s)"
k get pod slow-1 -n plain
expect_rc 1 "timed-out pod stored"

# ---- deletes are reviewed (the old object is what the selectors see) ----
n0=$(grep -c 'down-ignore.koord.test' "$TMP/server.log")
k delete pod d2 -n plain --wait=false
expect_rc 0 "delete d2 (down-ignore webhook matches the old object)"
[ "$(grep -c 'down-ignore.koord.test' "$TMP/server.log")" -gt "$n0" ] ||
    fail "the delete was not sent to the webhook whose objectSelector the old object matches"

# ---- metrics ----
k get --raw /metrics
expect_out 'apiserver_admission_webhook_rejection_count{error_type="no_error",name="deny.koord.test",operation="CREATE",rejection_code="403",type="validating"}' "rejection metric"
expect_out 'apiserver_admission_webhook_rejection_count{error_type="calling_webhook_error",name="down-fail.koord.test",operation="CREATE",rejection_code="0",type="admit"}' "calling error metric"
expect_out 'apiserver_admission_webhook_admission_duration_seconds_count{name="label.koord.test",operation="CREATE",rejected="false",type="admit"}' "duration metric"
expect_out 'apiserver_admission_webhook_fail_open_count{name="down-ignore.koord.test",type="admit"}' "fail open metric"

# ---- removing the configurations stops the calls ----
k delete validatingwebhookconfiguration checks
expect_rc 0 "delete configuration"
k run bad-3 -n hooked --image=busybox --restart=Never --labels=deny=yes
expect_rc 0 "no validating webhook after the configuration is gone"

finish
