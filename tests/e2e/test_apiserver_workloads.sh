#!/bin/bash
# The workload kinds of koord apiserver against kubectl, as kube-apiserver serves them without
# controllers: apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet, ControllerRevision,
# batch/v1 Job, CronJob, policy/v1 PodDisruptionBudget, events.k8s.io/v1 Event and
# discovery.k8s.io/v1 EndpointSlice. Discovery with kube's short names, kubectl's typed
# create commands (protobuf bodies), scale, apply of every kind with kube's defaults, the
# printer columns of `get -o wide`, the generation, the status subresource, refusals with
# kube's messages, and evictions refused with 429 by a PodDisruptionBudget.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || skip "kubectl not installed"

# squeeze: kubectl pads columns to their widths; compare with single spaces.
squeeze() { sed -i 's/  */ /g' "$TMP/out"; }
# jp OBJ PATH WANT DESC: kubectl get OBJ -o jsonpath=PATH prints WANT.
jp() {
    k get $1 -o "jsonpath=$2"
    [ "$rc" -eq 0 ] && [ "$(cat "$TMP/out")" = "$3" ] ||
        fail "$4: $1 $2 is '$(cat "$TMP/out")', want '$3'"
}

start_apiserver "$TMP/data"

# ---- discovery ----
k api-resources
expect_rc 0 "api-resources"
squeeze
for row in "deployments deploy apps/v1 true Deployment" "replicasets rs apps/v1 true ReplicaSet" \
    "statefulsets sts apps/v1 true StatefulSet" "daemonsets ds apps/v1 true DaemonSet" \
    "controllerrevisions apps/v1 true ControllerRevision" "jobs batch/v1 true Job" \
    "cronjobs cj batch/v1 true CronJob" "poddisruptionbudgets pdb policy/v1 true PodDisruptionBudget" \
    "events ev events.k8s.io/v1 true Event" "endpointslices discovery.k8s.io/v1 true EndpointSlice"; do
    expect_out "$row" "api-resources lists $row"
done
k get --raw /apis/apps/v1
expect_out '{"name":"deployments/scale","singularName":"","namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale"' \
    "deployments/scale in discovery"
expect_out '"name":"deployments/status"' "deployments/status in discovery"
expect_out '"categories":["all"]' "workloads in the all category"

# ---- typed create commands (protobuf bodies) and scale ----
k create deployment web --image=nginx --replicas=2
expect_rc 0 "kubectl create deployment"
jp deploy/web '{.spec.strategy.type} {.spec.strategy.rollingUpdate.maxSurge} {.spec.strategy.rollingUpdate.maxUnavailable} {.spec.revisionHistoryLimit} {.spec.progressDeadlineSeconds} {.metadata.generation}' \
    "RollingUpdate 25% 25% 10 600 1" "Deployment defaults"
k scale deployment web --replicas=4
expect_rc 0 "kubectl scale deployment"
jp deploy/web '{.spec.replicas} {.metadata.generation}' "4 2" "scale writes spec.replicas, a new generation"
k get --raw /apis/apps/v1/namespaces/default/deployments/web/scale
expect_out '"kind":"Scale","apiVersion":"autoscaling/v1"' "the scale subresource answers a Scale"
expect_out '"spec":{"replicas":4},"status":{"replicas":0,"selector":"app=web"}}' \
    "Scale replicas and selector string"
k scale deployment web --replicas=-1
expect_rc 1 "negative scale"

k create job pi --image=busybox -- true
expect_rc 0 "kubectl create job"
uid=$(kubectl get job pi -o jsonpath='{.metadata.uid}')
jp job/pi '{.spec.selector.matchLabels.batch\.kubernetes\.io/controller-uid} {.spec.template.metadata.labels.job-name} {.spec.backoffLimit} {.spec.completions} {.spec.parallelism} {.spec.completionMode} {.spec.suspend} {.spec.podReplacementPolicy}' \
    "$uid pi 6 1 1 NonIndexed false TerminatingOrFailed" "Job generated selector and defaults"
k get jobs --field-selector status.successful=0 -o name
expect_out "job.batch/pi" "field selector status.successful"
k get jobs --field-selector status.successful=1 -o name
[ ! -s "$TMP/out" ] || fail "status.successful=1 selects nothing: $(cat "$TMP/out")"
k create cronjob tick --image=busybox --schedule='*/5 * * * *'
expect_rc 0 "kubectl create cronjob"
jp cj/tick '{.spec.concurrencyPolicy} {.spec.suspend} {.spec.successfulJobsHistoryLimit} {.spec.failedJobsHistoryLimit}' \
    "Allow false 3 1" "CronJob defaults"
k create poddisruptionbudget web-pdb --selector=app=web --min-available=2
expect_rc 0 "kubectl create poddisruptionbudget"

# ---- apply of every kind ----
cat >"$TMP/all.yaml" <<'EOF'
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: front}
spec:
  selector: {matchLabels: {app: front}}
  template:
    metadata: {labels: {app: front}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: pg, image: postgres}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {kubernetes.io/os: linux}
      containers: [{name: a, image: koord}]
---
apiVersion: apps/v1
kind: ControllerRevision
metadata:
  name: agent-5d8f
  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: 0d6f0a4e-0000-4000-8000-000000000001, controller: true}]
revision: 1
data: {spec: {template: {}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: batch1}
spec:
  parallelism: 3
  template:
    metadata: {labels: {app: batch1}}
    spec:
      restartPolicy: Never
      containers: [{name: w, image: busybox}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 3 * * mon-fri"
  timeZone: UTC
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: nightly, image: busybox}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db-pdb}
spec:
  maxUnavailable: 25%
  selector: {matchLabels: {app: db}}
---
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: web.1}
eventTime: "2026-01-02T03:04:05.000000Z"
reportingController: koord.sh/test
reportingInstance: test-1
action: Testing
reason: Tested
type: Normal
note: a test event
regarding: {kind: Deployment, name: web, namespace: default}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-abc12, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 80, protocol: TCP}]
endpoints:
- addresses: [10.0.0.1]
  conditions: {ready: true}
- addresses: [10.0.0.2]
EOF
k apply -f "$TMP/all.yaml"
expect_rc 0 "apply every workload kind"
for o in replicaset.apps/front statefulset.apps/db daemonset.apps/agent \
    controllerrevision.apps/agent-5d8f job.batch/batch1 cronjob.batch/nightly \
    poddisruptionbudget.policy/db-pdb event.events.k8s.io/web.1 endpointslice.discovery.k8s.io/web-abc12; do
    expect_out "$o created" "apply creates $o"
done
jp rs/front '{.spec.replicas}' "1" "ReplicaSet replicas default"
jp sts/db '{.spec.replicas} {.spec.podManagementPolicy} {.spec.updateStrategy.type} {.spec.updateStrategy.rollingUpdate.partition} {.spec.revisionHistoryLimit} {.spec.persistentVolumeClaimRetentionPolicy.whenDeleted}' \
    "1 OrderedReady RollingUpdate 0 10 Retain" "StatefulSet defaults"
jp ds/agent '{.spec.updateStrategy.type} {.spec.updateStrategy.rollingUpdate.maxUnavailable} {.spec.updateStrategy.rollingUpdate.maxSurge} {.metadata.annotations.deprecated\.daemonset\.template\.generation}' \
    "RollingUpdate 1 0 1" "DaemonSet defaults"
k set image ds/agent a=koord:2
expect_rc 0 "set the DaemonSet's image"
jp ds/agent '{.metadata.annotations.deprecated\.daemonset\.template\.generation} {.metadata.generation}' \
    "2 2" "a template change is a new template generation"
jp job/batch1 '{.spec.parallelism} {.spec.completions} {.metadata.labels.app}' "3  batch1" \
    "Job: completions stay unset with parallelism; labels from the template"
jp pdb/db-pdb '{.status.disruptionsAllowed} {.status.expectedPods}' "0 0" \
    "a new PDB over no pods: nothing to disrupt"
k apply -f "$TMP/all.yaml"
expect_rc 0 "apply again"
expect_out "statefulset.apps/db unchanged" "a second apply changes nothing"
# A PUT of the manifest as written (its defaults left out) is no spec change either: the
# generation compares the specs after defaulting.
sed -n '/^kind: StatefulSet/,/^---/p' "$TMP/all.yaml" | sed '$d' | sed '1i apiVersion: apps/v1' >"$TMP/sts.yaml"
k replace -f "$TMP/sts.yaml"
expect_rc 0 "replace the StatefulSet with its manifest"
jp sts/db '{.metadata.generation}' "1" "defaults compare equal: no new generation"

# ---- printer columns ----
k get deploy,rs,sts,ds,job,cj,pdb -o wide
expect_rc 0 "get -o wide"
squeeze
for want in "NAME READY UP-TO-DATE AVAILABLE AGE CONTAINERS IMAGES SELECTOR" \
    "deployment.apps/web 0/4 0 0 " " nginx nginx app=web" \
    "NAME DESIRED CURRENT READY AGE CONTAINERS IMAGES SELECTOR" "replicaset.apps/front 1 0 0 " \
    "NAME READY AGE CONTAINERS IMAGES" "statefulset.apps/db 0/1 " \
    "NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE CONTAINERS IMAGES SELECTOR" \
    "daemonset.apps/agent 0 0 0 0 0 kubernetes.io/os=linux " \
    "NAME STATUS COMPLETIONS DURATION AGE CONTAINERS IMAGES SELECTOR" "job.batch/batch1 Running 0/1 of 3 " \
    "NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE CONTAINERS IMAGES SELECTOR" \
    "cronjob.batch/nightly 0 3 * * mon-fri UTC False 0 <none> " \
    "NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE" \
    "poddisruptionbudget.policy/web-pdb 2 N/A 0 " "poddisruptionbudget.policy/db-pdb N/A 25% 0 "; do
    expect_out "$want" "get -o wide shows '$want'"
done
k get controllerrevisions,endpointslices
squeeze
expect_out "controllerrevision.apps/agent-5d8f daemonset.apps/agent 1 " "ControllerRevision columns"
expect_out "endpointslice.discovery.k8s.io/web-abc12 IPv4 80 10.0.0.1,10.0.0.2 " "EndpointSlice columns"
k get events.events.k8s.io -o wide
squeeze
expect_out "Normal Tested deployment/web koord.sh/test, test-1 a test event" "events.k8s.io Event columns"

# ---- status subresource and generation ----
k patch deploy web --subresource=status --type merge -p '{"status":{"replicas":4,"readyReplicas":3,"availableReplicas":3,"updatedReplicas":4}}'
expect_rc 0 "status write"
k get deploy web
squeeze
expect_out "web 3/4 4 3 " "READY, UP-TO-DATE and AVAILABLE from the status"
jp deploy/web '{.metadata.generation}' "2" "a status write keeps the generation"
k patch deploy web --type merge -p '{"status":{"replicas":0}}'
expect_rc 0 "main resource patch"
jp deploy/web '{.status.replicas} {.metadata.generation}' "4 2" \
    "the main resource ignores status; no spec change, no new generation"
k label deploy web tier=front
jp deploy/web '{.metadata.generation}' "2" "a label is no spec change"
k set image deploy/web nginx=nginx:1.27
expect_rc 0 "set image"
jp deploy/web '{.metadata.generation}' "3" "a template change is a new generation"

# ---- refusals with kube's messages ----
cat >"$TMP/bad.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  replicas: -1
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: b}}
    spec:
      restartPolicy: OnFailure
      containers: [{name: c, image: nginx}]
EOF
k apply -f "$TMP/bad.yaml"
expect_rc 1 "invalid Deployment"
expect_out 'spec.replicas: Invalid value: -1: must be greater than or equal to 0' "negative replicas"
expect_out 'spec.template.metadata.labels: Invalid value: map[string]string{"app":"b"}: `selector` does not match template `labels`' \
    "selector must select the template"
expect_out 'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"' \
    "Deployment pods restart Always"
k get deploy bad
expect_rc 1 "nothing stored for a refused Deployment"
k patch deploy web --type merge -p '{"spec":{"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}}}}}'
expect_rc 1 "selector change"
expect_out 'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable' \
    "immutable selector"
k patch sts db --type merge -p '{"spec":{"serviceName":"other"}}'
expect_rc 1 "StatefulSet serviceName change"
expect_out "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden" \
    "StatefulSet spec is mostly immutable"
printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: empty}\nspec:\n  selector: {}\n  strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}\n  template: {spec: {containers: [{name: c, image: x}]}}\n' |
    k apply -f -
expect_rc 1 "empty selector"
expect_out 'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment' \
    "empty selector refused"
expect_out "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy \`type\` is 'Recreate'" \
    "Recreate takes no rollingUpdate"
printf 'apiVersion: batch/v1\nkind: Job\nmetadata: {name: always}\nspec:\n  template: {spec: {containers: [{name: c, image: x}]}}\n' |
    k apply -f -
expect_rc 1 "Job without restartPolicy"
expect_out 'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"' \
    "a Job's pods do not restart Always"
k patch job pi --type merge -p '{"spec":{"completions":5}}'
expect_rc 1 "Job completions change"
expect_out 'spec.completions: Invalid value: 5: field is immutable' "Job completions immutable"
printf 'apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: badcron}\nspec:\n  schedule: "61 * * *"\n  concurrencyPolicy: Sometimes\n  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}}}\n' |
    k apply -f -
expect_rc 1 "invalid CronJob"
expect_out 'spec.schedule: Invalid value: "61 * * *": expected exactly 5 fields, found 4: [61 * * *]' \
    "cron schedule field count"
expect_out 'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"' \
    "concurrencyPolicy enum"
printf 'apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: badcron}\nspec:\n  schedule: "61 * * * *"\n  timeZone: Mars/Olympus\n  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}}}\n' |
    k apply -f -
expect_out 'spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61' \
    "cron minute range"
expect_out 'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus' "time zone"
printf 'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: badpdb}\nspec:\n  minAvailable: 150%%\n  selector: {matchLabels: {app: a}}\n' |
    k apply -f -
expect_rc 1 "invalid PDB"
expect_out 'spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%' \
    "PDB percentage bound"
printf 'apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: badslice}\naddressType: IPv4\nendpoints: [{addresses: []}]\n' |
    k apply -f -
expect_rc 1 "invalid EndpointSlice"
expect_out 'endpoints[0].addresses: Required value: must contain at least 1 address' "EndpointSlice addresses"

# ---- evictions under a PodDisruptionBudget (web-pdb: minAvailable 2, selector app=web) ----
for p in p1 p2; do
    k run $p --image=nginx --labels=app=web
    expect_rc 0 "create pod $p"
    k patch pod $p --subresource=status --type merge \
        -p '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}'
    expect_rc 0 "pod $p ready"
done
evict() {
    printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"%s"}}' "$1" >"$TMP/ev.json"
    run kubectl create --raw "/api/v1/namespaces/default/pods/$1/eviction" -f "$TMP/ev.json" -v=6
}
evict p1
expect_rc 1 "eviction refused"
expect_out "429 Too Many Requests" "HTTP 429"
expect_out "Error from server (TooManyRequests): Cannot evict pod as it would violate the pod's disruption budget." \
    "kube's TooManyRequests message"
k get --raw /api/v1/namespaces/default/pods/p1
expect_rc 0 "the pod is still there"
jp pdb/web-pdb '{.status.currentHealthy} {.status.desiredHealthy} {.status.disruptionsAllowed} {.status.expectedPods}' \
    "2 2 0 2" "the PDB status computed at eviction time"
# Writing the budget computes its status too: with minAvailable 1 one pod may go.
k patch pdb web-pdb --type merge -p '{"spec":{"minAvailable":1}}'
jp pdb/web-pdb '{.status.disruptionsAllowed} {.status.desiredHealthy} {.status.observedGeneration}' \
    "1 1 2" "the status follows a spec change at once"
k patch pdb web-pdb --type merge -p '{"spec":{"minAvailable":2}}'
jp pdb/web-pdb '{.status.disruptionsAllowed}' "0" "and back"
k run p3 --image=nginx --labels=app=web
k patch pod p3 --subresource=status --type merge \
    -p '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}'
evict p3
expect_rc 0 "eviction allowed with one disruption to spare"
k get pod p3
expect_rc 1 "the evicted pod is gone"
jp pdb/web-pdb '{.status.disruptionsAllowed} {.status.currentHealthy}' "0 3" \
    "the eviction decremented disruptionsAllowed"
k get pdb web-pdb -o 'jsonpath={.status.disruptedPods}'
expect_out '"p3"' "the evicted pod is in disruptedPods"
evict p2
expect_rc 1 "no disruption left"
expect_out "429 Too Many Requests" "HTTP 429 again"
k run p4 --image=nginx --labels=app=web
evict p4
expect_rc 0 "a Pending pod is evicted without consulting the PDB"

finish
