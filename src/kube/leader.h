/*
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's LeaderElector does it
 * (tools/leaderelection/leaderelection.go; reference kubernetes-api.md section 8): only one
 * koord-manager replica runs the controllers and serves NodeMetric writes. Candidates try to
 * acquire every retry period (with jitter 1.2), the leader renews every retry period and gives
 * up when it could not renew for a whole renew deadline; a lease counts as expired when its
 * record has not changed for leaseDurationSeconds by the candidate's own clock, so clock skew
 * between machines does not matter. Writes carry the Lease's resourceVersion (optimistic
 * concurrency: a competing writer gets 409 and loses the round). On a clean stop the leader
 * releases the lease (holderIdentity "", leaseDurationSeconds 1) so another takes over at once.
 *
 * Callbacks run on the elector's thread and must return promptly (start or stop threads,
 * flip a flag); after losing the lease the elector goes back to trying to acquire it.
 */
#ifndef KOORD_KUBE_LEADER_H
#define KOORD_KUBE_LEADER_H

#include <stdbool.h>
#include <stddef.h>

struct kube_client;

struct kube_leader_opts {
    const char *namespace; /* of the Lease */
    const char *name;
    const char *identity;   /* unique per candidate; NULL = "<hostname>_<random hex>" */
    long lease_ms;          /* 0 = 15000; written as whole seconds (at least 1) */
    long renew_deadline_ms; /* 0 = 10000 */
    long retry_ms;          /* 0 = 2000 */
    bool keep_on_stop;      /* do not release on kube_leader_stop() */
    void (*on_started_leading)(void *userdata);
    void (*on_stopped_leading)(void *userdata);
    void (*on_new_leader)(void *userdata, const char *identity); /* observed holder changed */
    void *userdata;
};

struct kube_leader;

/*
 * Copies opts. -EINVAL unless namespace and name are set and lease > renew deadline >
 * 1.2 x retry (client-go's checks).
 */
int kube_leader_new(struct kube_client *c, const struct kube_leader_opts *opts,
                    struct kube_leader **ret);

/* Starts the elector thread. 0, -EBUSY, -errno. */
int kube_leader_start(struct kube_leader *le);

bool kube_leader_is_leader(struct kube_leader *le);

/* This candidate's identity (borrowed). */
const char *kube_leader_identity(const struct kube_leader *le);

/*
 * spec.leaseTransitions of the Lease as this candidate last read or wrote it. In
 * on_started_leading it is the count that includes this acquisition: every change of holder
 * increments it, so it grows with each leadership term and can number them (the manager's
 * NodeMetric API uses it as the epoch of its resourceVersions).
 */
long kube_leader_transitions(struct kube_leader *le);

/*
 * Stops the elector: a leader releases the lease (unless keep_on_stop) and gets
 * on_stopped_leading; joins the thread. Idempotent.
 */
void kube_leader_stop(struct kube_leader *le);

/* Stops and frees. NULL is fine. */
void kube_leader_free(struct kube_leader *le);

#endif
