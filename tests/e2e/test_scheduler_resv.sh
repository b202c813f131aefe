#!/bin/bash
# Reservations scheduled by koord scheduler against a real koord apiserver, driven by kubectl: a
# Reservation is placed as its template pod would be and bound by its status (Available,
# nodeName, allocatable, conditions, the Scheduled event); while Available its resources are held
# against other pods; one that fits nowhere gets Scheduled=False with the FitError and a
# FailedScheduling event and keeps its phase; deleting a Reservation frees its room; an owner
# pod lands in its Reservation (annotated), a pod that is no owner keeps off it, and an
# allocateOnce Reservation turns Succeeded with its first owner. Waits poll with deadlines.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || skip "kubectl not installed"
command -v curl >/dev/null || skip "curl not installed"

start_apiserver "$TMP/data"
spid=""
trap 'kill -9 $pid $spid 2>/dev/null || true; rm -rf "$TMP"' EXIT
k apply -f "$KOORD_SOURCE_DIR/deploy/crds/" -f "$KOORD_SOURCE_DIR/deploy/priorityclasses.yaml"
expect_rc 0 "apply CRDs and priority classes"

node() { # NAME CPU
    cat >"$TMP/node-$1.yaml" <<EOF
apiVersion: v1
kind: Node
metadata: {name: $1, labels: {kubernetes.io/hostname: $1}}
status:
  allocatable: {cpu: "$2", memory: 8Gi, pods: "110"}
  capacity: {cpu: "$2", memory: 8Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
EOF
    k create -f "$TMP/node-$1.yaml"
    expect_rc 0 "create node $1"
}
node node-a 4
node node-b 2

# The default profile (koord-scheduler) runs the Reservation plugin.
"$KOORD" scheduler --listen 127.0.0.1:0 --ready-file "$TMP/s.ready" --log-level debug \
    >>"$TMP/sched.log" 2>&1 &
spid=$!
wait_for "scheduler listening" test -s "$TMP/s.ready"
saddr=$(cat "$TMP/s.ready")
wait_for "scheduler ready" curl -sf "http://$saddr/readyz"

reservation() { # NAME CPU: a Reservation for koord-scheduler owned by pods labelled app=NAME
    cat >"$TMP/r-$1.yaml" <<EOF
apiVersion: scheduling.koordinator.sh/v1alpha1
kind: Reservation
metadata: {name: $1}
spec:
  template:
    metadata: {namespace: default, labels: {app: $1}}
    spec:
      schedulerName: koord-scheduler
      containers: [{name: c, image: pause, resources: {requests: {cpu: "$2", memory: 1Gi}}}]
  owners: [{labelSelector: {matchLabels: {app: $1}}}]
EOF
    k create -f "$TMP/r-$1.yaml"
    expect_rc 0 "create reservation $1"
}
field() { kubectl get reservation "$1" -o jsonpath="$2"; }
phase_is() { [ "$(field "$1" '{.status.phase}')" = "$2" ]; }
pod() { # NAME CPU: a plain pod for koord-scheduler
    cat >"$TMP/pod-$1.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  schedulerName: koord-scheduler
  terminationGracePeriodSeconds: 0
  containers: [{name: c, image: pause, resources: {requests: {cpu: "$2", memory: 100Mi}}}]
EOF
    k create -f "$TMP/pod-$1.yaml"
    expect_rc 0 "create pod $1"
}
node_of() { kubectl get pod "$1" -o jsonpath='{.spec.nodeName}'; }
bound_to() { [ "$(node_of "$1")" = "$2" ]; }
events() { # OBJECT REASON
    kubectl get events --field-selector "involvedObject.name=$1,reason=$2" \
        -o jsonpath='{.items[*].message}'
}
has_event() { events "$1" "$2" | grep -qF "$3"; }

# 1. Only node-a has room for 3 cpu: the Reservation is bound there by its status.
reservation r1 3
wait_for "r1 Available" phase_is r1 Available
[ "$(field r1 '{.status.nodeName}')" = node-a ] || fail "r1 on $(field r1 '{.status.nodeName}'), want node-a"
[ "$(field r1 '{.status.allocatable.cpu}')" = 3 ] || fail "r1 allocatable cpu $(field r1 '{.status.allocatable.cpu}'), want 3"
[ "$(field r1 '{.status.conditions[?(@.type=="Scheduled")].status}')" = True ] || fail "r1 Scheduled condition"
[ "$(field r1 '{.status.conditions[?(@.type=="Ready")].reason}')" = Available ] || fail "r1 Ready condition"
wait_for "Scheduled event on r1" has_event r1 Scheduled "Successfully assigned r1 to node-a"
k get reservation r1
expect_out "Available" "kubectl get reservation shows the phase"
expect_out "node-a" "kubectl get reservation shows the node"

# 2. The reserved 3 cpu are held: a 2-cpu pod fits only node-b, a second one nowhere.
pod p1 2
wait_for "p1 on node-b" bound_to p1 node-b
pod p2 2
wait_for "FailedScheduling for p2" has_event p2 FailedScheduling "0/2 nodes are available: 2 Insufficient cpu."

# 3. A Reservation too big for every node: Scheduled=False with the FitError (no preemption: a
# Reservation evicts nobody), an event, its phase unchanged.
reservation huge 16
sched_msg() { [ "$(field huge '{.status.conditions[?(@.type=="Scheduled")].message}')" = "$1" ]; }
wait_for "huge Scheduled=False" sched_msg "0/2 nodes are available: 2 Insufficient cpu."
[ "$(field huge '{.status.conditions[?(@.type=="Scheduled")].reason}')" = Unschedulable ] || fail "huge reason"
[ "$(field huge '{.status.phase}')" = Pending ] || fail "huge phase $(field huge '{.status.phase}'), want Pending"
wait_for "FailedScheduling on huge" has_event huge FailedScheduling "0/2 nodes are available: 2 Insufficient cpu."

# 4. Deleting r1 frees node-a: p2 is placed there.
k delete reservation r1
expect_rc 0 "delete r1"
wait_for "p2 on node-a once r1 is gone" bound_to p2 node-a

# 5. Owners: r2 reserves 3 of node-c's 4 cpu. A pod that is not an owner keeps off it (node-a
# has room), an owner lands in it and is annotated with it, and r2 (allocateOnce) turns
# Succeeded with that owner, which frees what it had left.
node node-c 4
reservation r2 3
wait_for "r2 Available" phase_is r2 Available
[ "$(field r2 '{.status.nodeName}')" = node-c ] || fail "r2 on $(field r2 '{.status.nodeName}'), want node-c"
pod stranger 2
wait_for "the non-owner on node-a" bound_to stranger node-a
owner_pod() { # NAME CPU: a pod labelled as r2's owner
    cat >"$TMP/pod-$1.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {app: r2}}
spec:
  schedulerName: koord-scheduler
  terminationGracePeriodSeconds: 0
  containers: [{name: c, image: pause, resources: {requests: {cpu: "$2", memory: 100Mi}}}]
EOF
    k create -f "$TMP/pod-$1.yaml"
    expect_rc 0 "create pod $1"
}
owner_pod owner 2
wait_for "the owner in r2 on node-c" bound_to owner node-c
uid=$(field r2 '{.metadata.uid}')
k get pod owner -o jsonpath='{.metadata.annotations.scheduling\.koordinator\.sh/reservation-allocated}'
expect_out "\"uid\":\"$uid\"" "the owner's reservation-allocated annotation"
wait_for "r2 Succeeded after its owner" phase_is r2 Succeeded
[ "$(field r2 '{.status.currentOwners[0].name}')" = owner ] || fail "r2 currentOwners"
# What r2 had left (1 cpu) is free again: a 2-cpu pod fits node-c beside the owner.
pod after 2
wait_for "node-c free again once r2 is done" bound_to after node-c
finish
