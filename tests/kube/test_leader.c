/*
 * Tests for kube/leader against a real koord API server with short durations (lease 1 s, renew
 * deadline 0.6 s, retry 0.1 s): of two candidates exactly one leads and the Lease says so in
 * client-go's format; the leader releases on a clean stop and the other takes over well before
 * the lease would have expired; a leader whose lease is taken from it (another writer puts a
 * different holder, so its renewals conflict and then find the lease held) stops leading; and
 * bad durations are refused.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/rfc3339.h"
#include "base/base.h"
#include "kube/client.h"
#include "kube/leader.h"
#include "kubetest.h"
#include "testutil.h"

struct cand {
    pthread_mutex_t lock;
    int started, stopped;
    char leader[128]; /* last on_new_leader */
    struct kube_leader *le;
};

static void on_started(void *ud)
{
    struct cand *c = ud;

    (void)pthread_mutex_lock(&c->lock);
    c->started++;
    (void)pthread_mutex_unlock(&c->lock);
}

static void on_stopped(void *ud)
{
    struct cand *c = ud;

    (void)pthread_mutex_lock(&c->lock);
    c->stopped++;
    (void)pthread_mutex_unlock(&c->lock);
}

static void on_new_leader(void *ud, const char *id)
{
    struct cand *c = ud;

    (void)pthread_mutex_lock(&c->lock);
    (void)snprintf(c->leader, sizeof(c->leader), "%s", id);
    (void)pthread_mutex_unlock(&c->lock);
}

static void cand_start(struct cand *c, struct kube_client *kc, const char *id)
{
    struct kube_leader_opts o = {
        .namespace = "kube-system",
        .name = "koord-manager",
        .identity = id,
        /* Short enough for quick takeovers, long enough that a renewal over TLS under
         * valgrind on a loaded machine (a few hundred ms) fits in the renew deadline. */
        .lease_ms = 2000,
        .renew_deadline_ms = 1500,
        .retry_ms = 100,
        .on_started_leading = on_started,
        .on_stopped_leading = on_stopped,
        .on_new_leader = on_new_leader,
        .userdata = c,
    };

    CHECK(pthread_mutex_init(&c->lock, NULL) == 0);
    assert_int_equal(kube_leader_new(kc, &o, &c->le), 0);
    assert_string_equal(kube_leader_identity(c->le), id);
    assert_int_equal(kube_leader_start(c->le), 0);
}

static void cand_free(struct cand *c)
{
    kube_leader_free(c->le);
    (void)pthread_mutex_destroy(&c->lock);
}

static bool is_leader(void *arg)
{
    return kube_leader_is_leader(arg);
}

static bool one_leads(void *arg)
{
    struct cand *c = arg;
    return kube_leader_is_leader(c[0].le) || kube_leader_is_leader(c[1].le);
}

static int count(struct cand *c, const int *field)
{
    int v;

    (void)pthread_mutex_lock(&c->lock);
    v = *field;
    (void)pthread_mutex_unlock(&c->lock);
    return v;
}

struct env {
    struct kt_server *srv;
    struct kube_client *c;
};

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));

    e->srv = kt_server_new(0);
    e->c = kt_client(e->srv);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;

    kube_client_free(e->c);
    kt_server_free(e->srv);
    free(e);
    return 0;
}

static cJSON *get_lease(struct env *e)
{
    cJSON *l = NULL;

    assert_int_equal(kube_get(e->c, &kube_res_leases, "kube-system", "koord-manager", &l, NULL), 0);
    return l;
}

static const cJSON *spec_of(const cJSON *l, const char *k)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(l, "spec"), k);
}

static void assert_micro_time(const cJSON *v)
{
    int64_t sec;
    int32_t ns;

    assert_true(cJSON_IsString(v));
    /* "2026-11-22T10:00:00.123456Z": exactly six fractional digits. */
    assert_int_equal(strlen(v->valuestring), 27);
    assert_int_equal(v->valuestring[19], '.');
    assert_int_equal(rfc3339_parse(v->valuestring, &sec, &ns), 0);
}

static void test_exactly_one_leads_and_release_hands_over(void **state)
{
    struct env *e = *state;
    struct cand c[2] = {0};
    struct cand *leader, *other;
    cJSON *l;

    cand_start(&c[0], e->c, "cand-a");
    cand_start(&c[1], e->c, "cand-b");
    assert_true(kt_wait(one_leads, c, 10));
    leader = kube_leader_is_leader(c[0].le) ? &c[0] : &c[1];
    other = leader == &c[0] ? &c[1] : &c[0];
    /* Several renew periods later the same one still leads, alone. */
    assert_false(kt_wait(is_leader, other->le, 0.5));
    assert_true(kube_leader_is_leader(leader->le));
    assert_int_equal(count(leader, &leader->started), 1);
    assert_int_equal(count(other, &other->started), 0);
    (void)pthread_mutex_lock(&other->lock);
    assert_string_equal(other->leader, kube_leader_identity(leader->le));
    (void)pthread_mutex_unlock(&other->lock);

    l = get_lease(e);
    assert_string_equal(spec_of(l, "holderIdentity")->valuestring,
                        kube_leader_identity(leader->le));
    assert_int_equal(spec_of(l, "leaseDurationSeconds")->valueint, 2);
    assert_micro_time(spec_of(l, "acquireTime"));
    assert_micro_time(spec_of(l, "renewTime"));
    assert_int_equal(spec_of(l, "leaseTransitions")->valueint, 0);
    assert_int_equal(kube_leader_transitions(leader->le), 0);
    cJSON_Delete(l);

    /* A clean stop releases the lease: when stop returns, the Lease no longer names the old
     * leader (a crashed one would stay named until the lease ran out), and the other takes
     * over on its next retry. */
    kube_leader_stop(leader->le);
    assert_int_equal(count(leader, &leader->stopped), 1);
    assert_false(kube_leader_is_leader(leader->le));
    l = get_lease(e);
    assert_string_not_equal(spec_of(l, "holderIdentity")->valuestring,
                            kube_leader_identity(leader->le));
    cJSON_Delete(l);
    assert_true(kt_wait(is_leader, other->le, 10));
    assert_int_equal(count(other, &other->started), 1);
    l = get_lease(e);
    assert_string_equal(spec_of(l, "holderIdentity")->valuestring, kube_leader_identity(other->le));
    assert_int_equal(spec_of(l, "leaseTransitions")->valueint, 1);
    /* The new term is numbered above the old one (the NodeMetric API's epoch). */
    assert_int_equal(kube_leader_transitions(other->le), 1);
    cJSON_Delete(l);

    cand_free(&c[0]);
    cand_free(&c[1]);
    /* The last leader released too. */
    l = get_lease(e);
    assert_string_equal(spec_of(l, "holderIdentity")->valuestring, "");
    cJSON_Delete(l);
}

static bool stopped_leading(void *arg)
{
    struct cand *c = arg;
    return count(c, &c->stopped) == 1;
}

static void test_leader_that_cannot_renew_stops(void **state)
{
    struct env *e = *state;
    struct cand c = {0};
    cJSON *l, *spec;

    cand_start(&c, e->c, "cand-a");
    assert_true(kt_wait(is_leader, c.le, 10));

    /* Another writer takes the lease for a long time: renewals conflict, then find it held.
     * The leader renews every 100 ms, so the intruder's read-modify-write retries on 409. */
    for (int r = -ESTALE, tries = 0; r == -ESTALE; tries++) {
        assert_true(tries < 100);
        l = get_lease(e);
        spec = cJSON_GetObjectItem(l, "spec");
        cJSON_ReplaceItemInObject(spec, "holderIdentity", cJSON_CreateString("intruder"));
        cJSON_ReplaceItemInObject(spec, "leaseDurationSeconds", cJSON_CreateNumber(3600));
        r = kube_update(e->c, &kube_res_leases, "kube-system", l, NULL, NULL, NULL);
        cJSON_Delete(l);
        assert_true(r == 0 || r == -ESTALE);
    }
    assert_true(kt_wait(stopped_leading, &c, 10));
    assert_false(kube_leader_is_leader(c.le));
    (void)pthread_mutex_lock(&c.lock);
    assert_string_equal(c.leader, "intruder");
    (void)pthread_mutex_unlock(&c.lock);
    cand_free(&c);
    /* Not the holder any more: nothing to release. */
    l = get_lease(e);
    assert_string_equal(spec_of(l, "holderIdentity")->valuestring, "intruder");
    cJSON_Delete(l);
}

static void test_bad_durations(void **state)
{
    struct env *e = *state;
    struct kube_leader *le = NULL;
    struct kube_leader_opts o = {.namespace = "ns",
                                 .name = "n",
                                 .lease_ms = 1000,
                                 .renew_deadline_ms = 1000,
                                 .retry_ms = 100};

    assert_int_equal(kube_leader_new(e->c, &o, &le), -EINVAL);
    o.renew_deadline_ms = 600;
    o.retry_ms = 500; /* renew must exceed 1.2 x retry */
    assert_int_equal(kube_leader_new(e->c, &o, &le), -EINVAL);
    o.retry_ms = 100;
    o.name = NULL;
    assert_int_equal(kube_leader_new(e->c, &o, &le), -EINVAL);
    o.name = "n";
    o.identity = NULL;
    assert_int_equal(kube_leader_new(e->c, &o, &le), 0);
    assert_non_null(strchr(kube_leader_identity(le), '_'));
    kube_leader_free(le);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_exactly_one_leads_and_release_hands_over, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_leader_that_cannot_renew_stops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_durations, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
