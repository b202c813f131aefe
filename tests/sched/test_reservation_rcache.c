/*
 * Tests for sched/reservation/rcache.c: the reserve pod of a HOLDING Reservation requests what
 * its owners left; owners counted once by pod uid, removed again; owners seen before their
 * Reservation count once it arrives; views and counts follow.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codec/codec.h"
#include "sched/reservation/owners.h"
#include "sched/reservation/rcache.h"
#include "schedtest.h"

#define HOLDING(uid, node)                                                                         \
    "{'metadata':{'name':'r-" uid "','uid':'" uid "','labels':{"                                   \
    "'scheduling.koordinator.sh/reservation-order':'3'}},'spec':{'template':{'spec':{"             \
    "'containers':[{'name':'c'}]}},'owners':[{'labelSelector':{}}]},'status':{"                    \
    "'phase':'Available','nodeName':'" node "','allocatable':{'cpu':'4','memory':'8Gi'}}}"

static struct {
    int calls;
    int64_t cpu, mem;
    char uid[64];
} seen;

static void changed(void *ud, struct sched_pod *p)
{
    (void)ud;
    seen.calls++;
    seen.cpu = p->req.v[SCHED_RES_CPU];
    seen.mem = p->req.v[SCHED_RES_MEMORY];
    (void)snprintf(seen.uid, sizeof(seen.uid), "%s", p->uid);
    sched_pod_unref(p);
}

static struct sched_res req(int64_t milli, int64_t bytes)
{
    struct sched_res r = {{0}};

    r.v[SCHED_RES_CPU] = milli;
    r.v[SCHED_RES_MEMORY] = bytes;
    return r;
}

static bool keep_named(const struct sched_resv *r, const void *name)
{
    return !strcmp(r->name, name);
}

static void test_remaining(void **state)
{
    (void)state;
    struct sched_rcache *c = sched_rcache_new(changed, NULL);
    cJSON *o = fx_json(HOLDING("u1", "n1"));
    struct sched_res one = req(1500, 1LL << 30), big = req(9000, 0);
    struct sched_rcache_view *v;
    struct sched_pod *p;
    size_t n;

    memset(&seen, 0, sizeof(seen));
    assert_int_equal(sched_rcache_count(c), 0);
    p = sched_rcache_set(c, o);
    assert_non_null(p);
    assert_int_equal(seen.calls, 1); /* the cache hears of it too */
    assert_int_equal(seen.cpu, 4000);
    assert_string_equal(p->uid, "u1");
    assert_string_equal(p->node_name, "n1");
    assert_int_equal(p->req.v[SCHED_RES_CPU], 4000);
    assert_int_equal(p->req.v[SCHED_RES_MEMORY], 8LL << 30);
    sched_pod_unref(p);
    assert_int_equal(sched_rcache_count(c), 1);

    /* An owner takes its requests off what is left; the same pod again changes nothing. */
    sched_rcache_add_owner(c, "u1", "pod-a", &one);
    assert_int_equal(seen.calls, 2);
    assert_string_equal(seen.uid, "u1");
    assert_int_equal(seen.cpu, 2500);
    assert_int_equal(seen.mem, 7LL << 30);
    sched_rcache_add_owner(c, "u1", "pod-a", &one);
    assert_int_equal(seen.calls, 2);
    /* More than is left: nothing is left (never negative). */
    sched_rcache_add_owner(c, "u1", "pod-b", &big);
    assert_int_equal(seen.calls, 3);
    assert_int_equal(seen.cpu, 0);
    n = sched_rcache_views(c, NULL, NULL, &v);
    assert_int_equal(n, 1);
    assert_string_equal(v[0].r->name, "r-u1");
    assert_int_equal(v[0].nowners, 2);
    assert_int_equal(v[0].order, 3);
    assert_int_equal(v[0].reserved.v[SCHED_RES_CPU], 4000);
    assert_int_equal(v[0].allocated.v[SCHED_RES_CPU], 10500);
    sched_rcache_views_free(v, n);
    /* Only what keep accepts is copied. */
    n = sched_rcache_views(c, keep_named, "r-other", &v);
    assert_int_equal(n, 0);
    assert_null(v);
    n = sched_rcache_views(c, keep_named, "r-u1", &v);
    assert_int_equal(n, 1);
    assert_string_equal(v[0].r->name, "r-u1");
    sched_rcache_views_free(v, n);
    sched_rcache_remove_owner(c, "u1", "pod-b");
    assert_int_equal(seen.calls, 4);
    assert_int_equal(seen.cpu, 2500);
    sched_rcache_remove_owner(c, "u1", "nobody");
    assert_int_equal(seen.calls, 4);

    /* An update keeps the owners. */
    p = sched_rcache_set(c, o);
    assert_int_equal(p->req.v[SCHED_RES_CPU], 2500);
    sched_pod_unref(p);

    sched_rcache_remove(c, "u1");
    assert_int_equal(sched_rcache_count(c), 0);
    n = sched_rcache_views(c, NULL, NULL, &v);
    assert_int_equal(n, 0);
    sched_rcache_views_free(v, n);
    cJSON_Delete(o);
    sched_rcache_free(c);
}

static void test_owner_first(void **state)
{
    (void)state;
    struct sched_rcache *c = sched_rcache_new(changed, NULL);
    cJSON *o = fx_json(HOLDING("u2", "n2"));
    struct sched_res one = req(1000, 0);
    struct sched_pod *p;

    memset(&seen, 0, sizeof(seen));
    /* The pod's annotation arrives before its Reservation: nothing to report yet. */
    sched_rcache_add_owner(c, "u2", "pod-a", &one);
    assert_int_equal(seen.calls, 0);
    assert_int_equal(sched_rcache_count(c), 0);
    p = sched_rcache_set(c, o);
    assert_int_equal(p->req.v[SCHED_RES_CPU], 3000);
    sched_pod_unref(p);
    /* A malformed Reservation is refused. */
    {
        cJSON *bad = fx_json("{'metadata':{'name':'x'}}");
        assert_null(sched_rcache_set(c, bad));
        cJSON_Delete(bad);
    }
    sched_rcache_remove(c, "u2");
    sched_rcache_remove_owner(c, "u2", "pod-a");
    cJSON_Delete(o);
    sched_rcache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_remaining),
        cmocka_unit_test(test_owner_first),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
