/*
 * Leader election (see leader.h), following client-go's tryAcquireOrRenew, acquire, renew and
 * release step by step (reference kubernetes-api.md 8.2).
 */
#include "kube/leader.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/rfc3339.h"
#include "base/base.h"
#include "codec/patch.h"
#include "kube/client.h"
#include "kube/kube-int.h"

#define RELEASE_ATTEMPTS 3
#define JITTER           1.2

struct kube_leader {
    struct kube_client *client;
    struct kube_leader_opts o;
    char *ns, *name, *identity;
    int lease_s;
    pthread_t thread;
    bool started;

    pthread_mutex_t lock; /* stopping, leading */
    pthread_cond_t cond;
    bool stopping;
    bool leading;
    long transitions; /* spec.leaseTransitions of the Lease as last read or written by us */

    /* elector thread only */
    cJSON *lease;       /* the Lease as last read or written by us */
    cJSON *observed;    /* the spec last observed */
    double observed_at; /* monotonic seconds when it last changed */
    double deadline;    /* monotonic seconds by which the current attempt must be over;
                           0 = no bound but the config's per-request timeout */
};

/* Bounds the next Lease request by what is left until le->deadline (at least 1 ms). */
static void arm(const struct kube_leader *le)
{
    double left = le->deadline - kube__now();

    if (le->deadline == 0)
        kube__request_timeout_ms = 0;
    else
        kube__request_timeout_ms = left > 0.001 ? (long)(left * 1000.0) : 1;
}

static bool is_stopping(struct kube_leader *le)
{
    bool s;

    (void)pthread_mutex_lock(&le->lock);
    s = le->stopping;
    (void)pthread_mutex_unlock(&le->lock);
    return s;
}

/* Waits seconds unless stopping; returns whether stopping. */
static bool wait_stop(struct kube_leader *le, double seconds)
{
    struct timespec ts;
    bool s;

    kube__deadline(seconds, &ts);
    (void)pthread_mutex_lock(&le->lock);
    while (!le->stopping && pthread_cond_timedwait(&le->cond, &le->lock, &ts) == 0)
        ;
    s = le->stopping;
    (void)pthread_mutex_unlock(&le->lock);
    return s;
}

static void now_micro(char buf[RFC3339_STR_MAX])
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_REALTIME, &ts);
    (void)rfc3339_format_micro((int64_t)ts.tv_sec, (int32_t)ts.tv_nsec, buf);
}

static const char *spec_str(const cJSON *spec, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static int spec_int(const cJSON *spec, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, key);
    return cJSON_IsNumber(v) ? (int)v->valuedouble : 0;
}

static void set_item(cJSON *obj, const char *key, cJSON *v)
{
    CHECK(v);
    if (cJSON_GetObjectItemCaseSensitive(obj, key))
        CHECK(cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v));
    else
        CHECK(cJSON_AddItemToObject(obj, key, v));
}

static void set_leading(struct kube_leader *le, bool leading)
{
    bool was;

    (void)pthread_mutex_lock(&le->lock);
    was = le->leading;
    le->leading = leading;
    (void)pthread_mutex_unlock(&le->lock);
    if (leading && !was && le->o.on_started_leading)
        le->o.on_started_leading(le->o.userdata);
    if (!leading && was && le->o.on_stopped_leading)
        le->o.on_stopped_leading(le->o.userdata);
}

/* Records spec as observed now if it differs from the last one; tells on_new_leader. */
static void observe(struct kube_leader *le, const cJSON *spec)
{
    const char *before = le->observed ? spec_str(le->observed, "holderIdentity") : NULL;
    bool holder_changed;

    if (le->observed && json_value_equal(le->observed, spec))
        return;
    holder_changed = !before || strcmp(before, spec_str(spec, "holderIdentity"));
    cJSON_Delete(le->observed);
    le->observed = cJSON_Duplicate(spec, true);
    CHECK(le->observed);
    le->observed_at = kube__now();
    if (holder_changed && le->o.on_new_leader)
        le->o.on_new_leader(le->o.userdata, spec_str(spec, "holderIdentity"));
}

/* Adopts the Lease the server answered with (takes ownership). */
static void adopt(struct kube_leader *le, cJSON *lease)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(lease, "spec"), "leaseTransitions");

    (void)pthread_mutex_lock(&le->lock);
    le->transitions = cJSON_IsNumber(t) && t->valuedouble >= 0 ? (long)t->valuedouble : 0;
    (void)pthread_mutex_unlock(&le->lock);
    cJSON_Delete(le->lease);
    le->lease = lease;
    observe(le, cJSON_GetObjectItemCaseSensitive(lease, "spec"));
}

static cJSON *new_lease(struct kube_leader *le, const char *now)
{
    cJSON *l = cJSON_CreateObject(), *meta, *spec;

    CHECK(l);
    CHECK(cJSON_AddStringToObject(l, "apiVersion", "coordination.k8s.io/v1"));
    CHECK(cJSON_AddStringToObject(l, "kind", "Lease"));
    CHECK(meta = cJSON_AddObjectToObject(l, "metadata"));
    CHECK(cJSON_AddStringToObject(meta, "name", le->name));
    CHECK(cJSON_AddStringToObject(meta, "namespace", le->ns));
    CHECK(spec = cJSON_AddObjectToObject(l, "spec"));
    CHECK(cJSON_AddStringToObject(spec, "holderIdentity", le->identity));
    CHECK(cJSON_AddNumberToObject(spec, "leaseDurationSeconds", le->lease_s));
    CHECK(cJSON_AddStringToObject(spec, "acquireTime", now));
    CHECK(cJSON_AddStringToObject(spec, "renewTime", now));
    CHECK(cJSON_AddNumberToObject(spec, "leaseTransitions", 0));
    return l;
}

/* A copy of base with the record client-go writes: holder me, renewTime now; acquireTime and
 * leaseTransitions kept when I already held it, else acquireTime now and transitions + 1. */
static cJSON *renewed(struct kube_leader *le, const cJSON *base, const char *now)
{
    cJSON *l = cJSON_Duplicate(base, true), *spec;
    bool mine;
    int transitions;

    CHECK(l);
    spec = cJSON_GetObjectItemCaseSensitive(l, "spec");
    if (!cJSON_IsObject(spec)) {
        cJSON_DeleteItemFromObjectCaseSensitive(l, "spec");
        CHECK(spec = cJSON_AddObjectToObject(l, "spec"));
    }
    mine = !strcmp(spec_str(spec, "holderIdentity"), le->identity);
    transitions = spec_int(spec, "leaseTransitions");
    set_item(spec, "holderIdentity", cJSON_CreateString(le->identity));
    set_item(spec, "leaseDurationSeconds", cJSON_CreateNumber(le->lease_s));
    set_item(spec, "renewTime", cJSON_CreateString(now));
    if (!mine || !cJSON_GetObjectItemCaseSensitive(spec, "acquireTime")) {
        set_item(spec, "acquireTime", cJSON_CreateString(now));
        set_item(spec, "leaseTransitions",
                 cJSON_CreateNumber(mine ? transitions : transitions + 1));
    }
    return l;
}

static bool put(struct kube_leader *le, const cJSON *lease)
{
    cJSON *got = NULL;

    arm(le);
    if (kube_update(le->client, &kube_res_leases, le->ns, lease, NULL, &got, NULL) < 0)
        return false;
    adopt(le, got);
    return true;
}

static bool attempt(struct kube_leader *le)
{
    char now[RFC3339_STR_MAX];
    cJSON *got = NULL, *want;
    const cJSON *spec;
    const char *holder;
    int dur, r;
    bool ok;

    now_micro(now);
    /* Fast path: the leader updates its cached Lease while its lease is still valid. */
    if (kube_leader_is_leader(le) && le->lease &&
        le->observed_at + (double)le->lease_s > kube__now()) {
        want = renewed(le, le->lease, now);
        ok = put(le, want);
        cJSON_Delete(want);
        if (ok)
            return true;
    }
    arm(le);
    r = kube_get(le->client, &kube_res_leases, le->ns, le->name, &got, NULL);
    if (r == -ENOENT) {
        want = new_lease(le, now);
        arm(le);
        r = kube_create(le->client, &kube_res_leases, le->ns, want, &got, NULL);
        cJSON_Delete(want);
        if (r < 0)
            return false;
        adopt(le, got);
        return true;
    }
    if (r < 0)
        return false;
    spec = cJSON_GetObjectItemCaseSensitive(got, "spec");
    if (spec)
        observe(le, spec);
    holder = spec_str(spec, "holderIdentity");
    dur = spec_int(spec, "leaseDurationSeconds");
    if (*holder && strcmp(holder, le->identity) &&
        le->observed_at + (double)(dur > 0 ? dur : 1) > kube__now()) {
        cJSON_Delete(got);
        return false;
    }
    want = renewed(le, got, now);
    cJSON_Delete(got);
    ok = put(le, want);
    cJSON_Delete(want);
    return ok;
}

static double jittered(struct kube_leader *le)
{
    double d = (double)le->o.retry_ms / 1000.0;
    return d + d * JITTER * kube__rand();
}

/* One acquire-or-renew whose requests all end by deadline (monotonic seconds; 0 = unbounded):
 * a leader renewing over a hung connection gives up leading in time instead of after the
 * config's 30 s per request. Acquiring is not bounded (as in client-go): a slow server must
 * still let someone become leader. */
static bool try_acquire_or_renew(struct kube_leader *le, double deadline)
{
    bool ok;

    le->deadline = deadline;
    ok = attempt(le);
    kube__request_timeout_ms = 0; /* callbacks on this thread get the normal timeout */
    return ok;
}

/* Gives the lease up so the next candidate need not wait for it to expire (client-go
 * ReleaseOnCancel). */
static void release(struct kube_leader *le)
{
    for (int i = 0; i < RELEASE_ATTEMPTS && le->lease; i++) {
        char now[RFC3339_STR_MAX];
        cJSON *want = cJSON_Duplicate(le->lease, true), *spec, *got = NULL;
        int r;

        CHECK(want);
        spec = cJSON_GetObjectItemCaseSensitive(want, "spec");
        if (!cJSON_IsObject(spec) || strcmp(spec_str(spec, "holderIdentity"), le->identity)) {
            cJSON_Delete(want);
            return;
        }
        now_micro(now);
        set_item(spec, "holderIdentity", cJSON_CreateString(""));
        set_item(spec, "leaseDurationSeconds", cJSON_CreateNumber(1));
        set_item(spec, "acquireTime", cJSON_CreateString(now));
        set_item(spec, "renewTime", cJSON_CreateString(now));
        arm(le);
        r = kube_update(le->client, &kube_res_leases, le->ns, want, NULL, &got, NULL);
        cJSON_Delete(want);
        if (r == 0) {
            adopt(le, got);
            return;
        }
        if (r != -ESTALE)
            return;
        /* 409: re-read, and release only if it is still ours. */
        arm(le);
        if (kube_get(le->client, &kube_res_leases, le->ns, le->name, &got, NULL) < 0)
            return;
        cJSON_Delete(le->lease);
        le->lease = got;
    }
}

static void *run(void *arg)
{
    struct kube_leader *le = arg;
    double retry = (double)le->o.retry_ms / 1000.0;
    double deadline_s = (double)le->o.renew_deadline_ms / 1000.0;

    while (!is_stopping(le)) {
        /* acquire */
        if (!try_acquire_or_renew(le, 0)) {
            if (wait_stop(le, jittered(le)))
                break;
            continue;
        }
        set_leading(le, true);
        /* renew until a whole renew deadline passes without success */
        for (;;) {
            double deadline;
            bool ok = false;

            if (wait_stop(le, retry))
                break;
            deadline = kube__now() + deadline_s;
            while (!(ok = try_acquire_or_renew(le, deadline)) && kube__now() + retry < deadline)
                if (wait_stop(le, retry))
                    break;
            if (!ok && !is_stopping(le)) {
                set_leading(le, false);
                break;
            }
            if (is_stopping(le))
                break;
        }
    }
    if (kube_leader_is_leader(le)) {
        /* Stop leading first: once released, the next candidate may lead at once. */
        set_leading(le, false);
        if (!le->o.keep_on_stop) {
            le->deadline = kube__now() + deadline_s;
            release(le);
            kube__request_timeout_ms = 0;
        }
    }
    return NULL;
}

int kube_leader_new(struct kube_client *c, const struct kube_leader_opts *opts,
                    struct kube_leader **ret)
{
    struct kube_leader *le;
    long lease = opts->lease_ms > 0 ? opts->lease_ms : 15000;
    long renew = opts->renew_deadline_ms > 0 ? opts->renew_deadline_ms : 10000;
    long retry = opts->retry_ms > 0 ? opts->retry_ms : 2000;

    if (!opts->namespace || !*opts->namespace || !opts->name || !*opts->name || lease <= renew ||
        (double)renew <= JITTER * (double)retry)
        return -EINVAL;
    le = xcalloc(1, sizeof(*le));
    le->client = c;
    le->o = *opts;
    le->o.lease_ms = lease;
    le->o.renew_deadline_ms = renew;
    le->o.retry_ms = retry;
    le->lease_s = (int)((lease + 999) / 1000);
    le->ns = xstrdup(opts->namespace);
    le->name = xstrdup(opts->name);
    if (opts->identity && *opts->identity) {
        le->identity = xstrdup(opts->identity);
    } else {
        char host[256] = "";
        char id[300];
        (void)gethostname(host, sizeof(host) - 1);
        (void)snprintf(id, sizeof(id), "%s_%08lx%08lx", host,
                       (unsigned long)(kube__rand() * 4294967295.0),
                       (unsigned long)(kube__rand() * 4294967295.0));
        le->identity = xstrdup(id);
    }
    le->o.namespace = le->ns;
    le->o.name = le->name;
    le->o.identity = le->identity;
    CHECK(pthread_mutex_init(&le->lock, NULL) == 0);
    kube__cond_init(&le->cond);
    *ret = le;
    return 0;
}

int kube_leader_start(struct kube_leader *le)
{
    int r;

    if (le->started)
        return -EBUSY;
    r = pthread_create(&le->thread, NULL, run, le);
    if (r != 0)
        return -r;
    le->started = true;
    return 0;
}

bool kube_leader_is_leader(struct kube_leader *le)
{
    bool l;

    (void)pthread_mutex_lock(&le->lock);
    l = le->leading;
    (void)pthread_mutex_unlock(&le->lock);
    return l;
}

const char *kube_leader_identity(const struct kube_leader *le)
{
    return le->identity;
}

long kube_leader_transitions(struct kube_leader *le)
{
    long t;

    (void)pthread_mutex_lock(&le->lock);
    t = le->transitions;
    (void)pthread_mutex_unlock(&le->lock);
    return t;
}

void kube_leader_stop(struct kube_leader *le)
{
    (void)pthread_mutex_lock(&le->lock);
    le->stopping = true;
    (void)pthread_cond_broadcast(&le->cond);
    (void)pthread_mutex_unlock(&le->lock);
    if (le->started)
        (void)pthread_join(le->thread, NULL);
    le->started = false;
}

void kube_leader_free(struct kube_leader *le)
{
    if (!le)
        return;
    kube_leader_stop(le);
    cJSON_Delete(le->lease);
    cJSON_Delete(le->observed);
    (void)pthread_cond_destroy(&le->cond);
    (void)pthread_mutex_destroy(&le->lock);
    free(le->ns);
    free(le->name);
    free(le->identity);
    free(le);
}
