/*
 * Tests for agent/qos/evict: the eviction-policy annotation (absent = all, unparsable = none),
 * the 2-minute recently-evicted memory and its expiry boundary, the Event text as upstream
 * writes it, and eviction rounds: order, skips, failed evictions, the cumulative stop, and
 * release shared between tasks of one kind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent/qos/evict.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"

static void test_policy(void **state)
{
    static const struct {
        const char *annotation, *feature;
        bool allowed;
    } cases[] = {
        {NULL, "BEMemoryEvict", true},
        {"[\"BEMemoryEvict\",\"CPUEvict\"]", "BEMemoryEvict", true},
        {"[\"BEMemoryEvict\",\"CPUEvict\"]", "CPUEvict", true},
        {"[\"BEMemoryEvict\",\"CPUEvict\"]", "MemoryEvict", false},
        {"[]", "BEMemoryEvict", false},
        {"null", "BEMemoryEvict", false},
        {"", "BEMemoryEvict", false},
        {"BEMemoryEvict", "BEMemoryEvict", false},
        {"{\"BEMemoryEvict\":true}", "BEMemoryEvict", false},
        {"[\"BEMemoryEvict\",1]", "BEMemoryEvict", false},
        {"[null,\"BEMemoryEvict\"]", "BEMemoryEvict", true},
        {"[\"bememoryevict\"]", "BEMemoryEvict", false},
        {"\"BEMemoryEvict\"", "BEMemoryEvict", false},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
        if (qos_evict_policy_allows(cases[i].annotation, cases[i].feature) != cases[i].allowed)
            fail_msg("case %zu: %s / %s", i, cases[i].annotation ? cases[i].annotation : "NULL",
                     cases[i].feature);
}

static void test_messages(void **state)
{
    struct strbuf msg = STRBUF_INIT, ev = STRBUF_INIT;

    (void)state;
    qos_evict_message(QOS_FEATURE_BE_MEMORY_EVICT, "be-pod-demo", &msg);
    assert_string_equal(msg.buf,
                        "trigger by koordlet feature BEMemoryEvict, kill pod: be-pod-demo");
    qos_evict_event_message("koordinator-system", "be-pod-demo", QOS_EVICT_REASON, msg.buf, NULL,
                            &ev);
    /* The text of the upstream documentation's kubectl get event example. */
    assert_string_equal(ev.buf, "evict Pod:koordinator-system/be-pod-demo, reason: evicted, "
                                "message: trigger by koordlet feature BEMemoryEvict, kill pod: "
                                "be-pod-demo");
    strbuf_reset(&ev);
    qos_evict_event_message("ns", "p", QOS_EVICT_REASON, "m", "pods \"p\" not found", &ev);
    assert_string_equal(ev.buf,
                        "evict Pod:ns/p, reason: evicted, message: m, error pods \"p\" not found");
    assert_string_equal(QOS_EVICT_EVENT_SUCCESS, "evictPodSuccess");
    assert_string_equal(QOS_EVICT_EVENT_FAIL, "evictPodFail");
    assert_string_equal(QOS_EVICT_EVENT_COMPONENT, "koordlet-qosManager");
    strbuf_release(&msg);
    strbuf_release(&ev);
}

static void test_evicted(void **state)
{
    struct qos_evicted e;
    char big[300];

    (void)state;
    qos_evicted_init(&e);
    assert_false(qos_evicted_contains(&e, "a", 0));
    assert_false(qos_evicted_contains(NULL, "a", 0));
    assert_int_equal(qos_evicted_add(&e, "a", 1000), 0);
    assert_true(qos_evicted_contains(&e, "a", 1000));
    /* Remembered for 2 minutes inclusive, forgotten one millisecond later. */
    assert_true(qos_evicted_contains(&e, "a", 1000 + 120000));
    assert_false(qos_evicted_contains(&e, "a", 1000 + 120001));
    assert_false(qos_evicted_contains(&e, "b", 1000));
    assert_false(qos_evicted_contains(&e, NULL, 1000));
    /* Adding again restarts the time. */
    assert_int_equal(qos_evicted_add(&e, "a", 60000), 0);
    assert_int_equal(e.n, 1);
    assert_true(qos_evicted_contains(&e, "a", 180000));
    for (int i = 0; i < 20; i++) {
        char uid[16];

        (void)snprintf(uid, sizeof(uid), "u%d", i);
        assert_int_equal(qos_evicted_add(&e, uid, 100000 + i), 0);
    }
    assert_int_equal(e.n, 21);
    qos_evicted_expire(&e, 180000);
    assert_int_equal(e.n, 21);
    /* "a" expires after 180000, u0..u19 after 220000..220019: at 220005, a and u0..u4 go. */
    qos_evicted_expire(&e, 220005);
    assert_int_equal(e.n, 15);
    assert_false(qos_evicted_contains(&e, "a", 0));
    assert_true(qos_evicted_contains(&e, "u5", 220005));
    assert_false(qos_evicted_contains(&e, "u4", 0));
    /* add() drops expired entries too. */
    assert_int_equal(qos_evicted_add(&e, "z", 1000000), 0);
    assert_int_equal(e.n, 1);
    assert_int_equal(qos_evicted_add(&e, "", 0), -EINVAL);
    assert_int_equal(qos_evicted_add(&e, NULL, 0), -EINVAL);
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(qos_evicted_add(&e, big, 0), -EINVAL);
    qos_evicted_release(&e);
    assert_int_equal(e.n, 0);
    qos_evicted_release(&e);
}

static void test_evicted_oom(void **state)
{
    struct qos_evicted e;

    (void)state;
    qos_evicted_init(&e);
    for (long n = 1;; n++) {
        int r, injected;

        alloc_fail_after(n);
        r = qos_evicted_add(&e, "a", 0);
        if (r == 0)
            r = qos_evicted_add(&e, "b", 0);
        injected = alloc_injected();
        alloc_fail_after(0);
        if (!injected) {
            assert_int_equal(r, 0);
            break;
        }
        assert_int_equal(r, -ENOMEM);
        qos_evicted_release(&e);
    }
    assert_true(qos_evicted_contains(&e, "b", 0));
    qos_evicted_release(&e);
}

/* ---- rounds ---- */

#define MAXLOG 16

/* The test's evictor: records calls, fails the pods named in fail. */
struct fake {
    const char *fail[4];
    const char *log[MAXLOG]; /* "feature:name" is too much; pod names in call order */
    const char *features[MAXLOG];
    size_t n;
};

static bool fake_evict(void *ctx, const struct qos_evict_task *task, const struct qos_pod *pod)
{
    struct fake *f = ctx;

    assert_true(f->n < MAXLOG);
    f->log[f->n] = pod->name;
    f->features[f->n++] = task->feature;
    for (size_t i = 0; i < ARRAY_SIZE(f->fail); i++)
        if (f->fail[i] && !strcmp(f->fail[i], pod->name))
            return false;
    return true;
}

static void expect_log(const struct fake *f, const char *want)
{
    struct strbuf sb = STRBUF_INIT;

    for (size_t i = 0; i < f->n; i++)
        strbuf_addf(&sb, "%s%s", i ? " " : "", f->log[i]);
    if (strcmp(sb.buf, want))
        fail_msg("evicted \"%s\", want \"%s\"", sb.buf, want);
    strbuf_release(&sb);
}

static struct qos_container batch_c = {
    .name = "c",
    .requests = {.v = {[QOS_RES_BATCH_CPU] = 2000, [QOS_RES_BATCH_MEMORY] = 300}},
};
static struct qos_container mid_c = {
    .name = "c",
    .requests = {.v = {[QOS_RES_MID_MEMORY] = 500}},
};

/* Pods a..e; a, b, c are batch, d mid, e prod. */
static struct qos_pod pods[] = {
    {.uid = "ua",
     .name = "a",
     .priority_class = API_PRIORITY_BATCH,
     .priority_class_raw = API_PRIORITY_BATCH,
     .containers = &batch_c,
     .ncontainers = 1},
    {.uid = "ub",
     .name = "b",
     .priority_class = API_PRIORITY_BATCH,
     .priority_class_raw = API_PRIORITY_BATCH,
     .containers = &batch_c,
     .ncontainers = 1},
    {.uid = "uc",
     .name = "c",
     .priority_class = API_PRIORITY_BATCH,
     .priority_class_raw = API_PRIORITY_BATCH,
     .containers = &batch_c,
     .ncontainers = 1},
    {.uid = "ud",
     .name = "d",
     .priority_class = API_PRIORITY_MID,
     .priority_class_raw = API_PRIORITY_MID,
     .containers = &mid_c,
     .ncontainers = 1},
    {.uid = "ue",
     .name = "e",
     .priority_class = API_PRIORITY_PROD,
     .priority_class_raw = API_PRIORITY_NONE,
     .requests = {.v = {[QOS_RES_MEMORY] = 700}}},
};

static struct qos_evict_victim V(int i, int64_t used) {
    struct qos_evict_victim v = {.pod = &pods[i], .used = used};
    return v;
}

static void
test_round_single_task(void **state)
{
    struct qos_evict_victim v[] = {V(0, 40), V(1, 30), V(2, 50)};
    struct qos_evict_task t = {
        .feature = "BEMemoryEvict",
        .target = QOS_RELEASE_USED,
        .used_res = QOS_RES_MEMORY,
        .release = {.v = {[QOS_RES_MEMORY] = 70}},
        .victims = v,
        .nvictims = 3,
    };
    struct qos_evict_result res;
    struct fake f = {0};

    (void)state;
    /* 40 < 70, 40 + 30 = 70 >= 70: stop; c is spared. */
    assert_int_equal(qos_evict_run(&t, 1, NULL, 0, fake_evict, &f, &res), 0);
    expect_log(&f, "a b");
    assert_int_equal(res.nevicted, 2);
    assert_int_equal(res.released[QOS_RELEASE_USED].v[QOS_RES_MEMORY], 70);

    /* One byte more: c goes too. */
    memset(&f, 0, sizeof(f));
    t.release.v[QOS_RES_MEMORY] = 71;
    assert_int_equal(qos_evict_run(&t, 1, NULL, 0, fake_evict, &f, &res), 0);
    expect_log(&f, "a b c");
    assert_int_equal(res.released[QOS_RELEASE_USED].v[QOS_RES_MEMORY], 120);

    /* A failed eviction counts nothing; the next victim is tried. */
    memset(&f, 0, sizeof(f));
    f.fail[0] = "a";
    t.release.v[QOS_RES_MEMORY] = 70;
    assert_int_equal(qos_evict_run(&t, 1, NULL, 0, fake_evict, &f, &res), 0);
    expect_log(&f, "a b c");
    assert_int_equal(res.nevicted, 2);
    assert_int_equal(res.released[QOS_RELEASE_USED].v[QOS_RES_MEMORY], 80);

    /* Recently evicted pods are not evicted again but count as being released, until they
     * expire: a's 40 + b's 30 meet 70 with one eviction. */
    {
        struct qos_evicted recent;

        qos_evicted_init(&recent);
        assert_int_equal(qos_evicted_add(&recent, "ua", 0), 0);
        memset(&f, 0, sizeof(f));
        assert_int_equal(qos_evict_run(&t, 1, &recent, 120000, fake_evict, &f, &res), 0);
        expect_log(&f, "b");
        assert_int_equal(res.nevicted, 1);
        assert_int_equal(res.nrecent, 1);
        assert_int_equal(res.released[QOS_RELEASE_USED].v[QOS_RES_MEMORY], 70);
        /* All three recently evicted: nothing is evicted; a and b already count 70. */
        memset(&f, 0, sizeof(f));
        assert_int_equal(qos_evicted_add(&recent, "ub", 0), 0);
        assert_int_equal(qos_evicted_add(&recent, "uc", 0), 0);
        assert_int_equal(qos_evict_run(&t, 1, &recent, 1000, fake_evict, &f, &res), 0);
        assert_int_equal(f.n, 0);
        assert_int_equal(res.nevicted, 0);
        assert_int_equal(res.nrecent, 2);
        assert_int_equal(res.released[QOS_RELEASE_USED].v[QOS_RES_MEMORY], 70);
        memset(&f, 0, sizeof(f));
        assert_int_equal(qos_evict_run(&t, 1, &recent, 120001, fake_evict, &f, &res), 0);
        expect_log(&f, "a b");
        assert_int_equal(res.nrecent, 0);
        qos_evicted_release(&recent);
    }

    /* Nothing to release: no task runs. */
    memset(&f, 0, sizeof(f));
    t.release.v[QOS_RES_MEMORY] = 0;
    assert_int_equal(qos_evict_run(&t, 1, NULL, 0, fake_evict, &f, &res), 0);
    assert_int_equal(f.n, 0);
    assert_int_equal(res.nevicted, 0);
    /* Victims without usage release 0 but are still evicted while the target is unmet. */
    memset(&f, 0, sizeof(f));
    t.release.v[QOS_RES_MEMORY] = 1;
    v[0].used = 0;
    v[1].used = 0;
    assert_int_equal(qos_evict_run(&t, 1, NULL, 0, fake_evict, &f, &res), 0);
    expect_log(&f, "a b c");
}

static void test_round_shared(void **state)
{
    struct qos_evict_victim be[] = {V(0, 40), V(1, 30)};
    struct qos_evict_victim alloc[] = {V(3, 0), V(1, 0), V(2, 0), V(4, 0)};
    struct qos_evict_victim mem[] = {V(1, 0), V(2, 25), V(0, 0)};
    struct qos_evict_task t[] = {
        {.feature = "BEMemoryEvict",
         .target = QOS_RELEASE_USED,
         .used_res = QOS_RES_MEMORY,
         .release = {.v = {[QOS_RES_MEMORY] = 50}},
         .victims = be,
         .nvictims = 2},
        {.feature = "MemoryAllocatableEvict",
         .target = QOS_RELEASE_REQUEST,
         .request_res = QOS_RES_MEMORY,
         .request_classes = 1u << API_PRIORITY_BATCH,
         .release = {.v = {[QOS_RES_BATCH_MEMORY] = 900}},
         .victims = alloc,
         .nvictims = 4},
        {.feature = "MemoryEvict",
         .target = QOS_RELEASE_USED,
         .used_res = QOS_RES_MEMORY,
         .release = {.v = {[QOS_RES_MEMORY] = 90}},
         .victims = mem,
         .nvictims = 3},
    };
    struct qos_evict_result res;
    struct fake f = {0};

    (void)state;
    /*
     * BE: a (40) then b (30): 70 >= 50. Each also counts its batch-memory request (300) in the
     * request kind: 600. Allocatable: d is mid (not a counted class: 0 more), b is done, c adds
     * 300: 900 >= 900, e spared. MemoryEvict: 70 + c's 0 (c's usage in its allocatable entry)
     * = 70 < 90; b and c are done, a is done: nothing more to evict.
     */
    assert_int_equal(qos_evict_run(t, 3, NULL, 0, fake_evict, &f, &res), 0);
    expect_log(&f, "a b d c");
    assert_string_equal(f.features[0], "BEMemoryEvict");
    assert_string_equal(f.features[2], "MemoryAllocatableEvict");
    assert_int_equal(res.nevicted, 4);
    assert_int_equal(res.released[QOS_RELEASE_USED].v[QOS_RES_MEMORY], 70);
    assert_int_equal(res.released[QOS_RELEASE_REQUEST].v[QOS_RES_BATCH_MEMORY], 900);
    assert_int_equal(res.released[QOS_RELEASE_REQUEST].v[QOS_RES_MID_MEMORY], 0);

    /* A later task whose target the earlier ones already met does not run. */
    memset(&f, 0, sizeof(f));
    t[2].release.v[QOS_RES_MEMORY] = 70;
    assert_int_equal(qos_evict_run(t, 3, NULL, 0, fake_evict, &f, &res), 0);
    expect_log(&f, "a b d c");

    /* Mid counts under its own name: a and b meet batch-memory 600, d meets mid-memory 1. */
    memset(&f, 0, sizeof(f));
    t[1].request_classes |= 1u << API_PRIORITY_MID;
    t[1].release.v[QOS_RES_BATCH_MEMORY] = 600;
    t[1].release.v[QOS_RES_MID_MEMORY] = 1;
    assert_int_equal(qos_evict_run(t, 3, NULL, 0, fake_evict, &f, &res), 0);
    expect_log(&f, "a b d");
    assert_int_equal(res.released[QOS_RELEASE_REQUEST].v[QOS_RES_MID_MEMORY], 500);
}

static void test_round_batch_request(void **state)
{
    struct qos_evict_victim be[] = {V(0, 900), V(1, 100), V(2, 0)};
    struct qos_evict_victim cpu[] = {V(4, 3000), V(2, 10)};
    struct qos_evict_task t[] = {
        {.feature = "BECPUEvict",
         .target = QOS_RELEASE_BATCH_REQUEST,
         .release = {.v = {[QOS_RES_CPU] = 3000}},
         .victims = be,
         .nvictims = 3},
        {.feature = "CPUEvict",
         .target = QOS_RELEASE_USED,
         .used_res = QOS_RES_CPU,
         .release = {.v = {[QOS_RES_CPU] = 1500}},
         .victims = cpu,
         .nvictims = 2},
    };
    struct qos_evict_result res;
    struct fake f = {0};

    (void)state;
    /* BECPUEvict counts batch-cpu requests (2000 each): a, b. Their usage (1000) counts for
     * CPUEvict, which then needs e (3000). */
    assert_int_equal(qos_evict_run(t, 2, NULL, 0, fake_evict, &f, &res), 0);
    expect_log(&f, "a b e");
    assert_int_equal(res.released[QOS_RELEASE_BATCH_REQUEST].v[QOS_RES_CPU], 4000 + 0);
    assert_int_equal(res.released[QOS_RELEASE_USED].v[QOS_RES_CPU], 4000);
}

static void test_round_oom(void **state)
{
    struct qos_evict_victim v[] = {V(0, 40)};
    struct qos_evict_task t = {.feature = "x",
                               .target = QOS_RELEASE_USED,
                               .used_res = QOS_RES_MEMORY,
                               .release = {.v = {[QOS_RES_MEMORY] = 1}},
                               .victims = v,
                               .nvictims = 1};
    struct qos_evict_result res;
    struct fake f = {0};
    int r;

    (void)state;
    alloc_fail_after(1);
    r = qos_evict_run(&t, 1, NULL, 0, fake_evict, &f, &res);
    alloc_fail_after(0);
    assert_int_equal(r, -ENOMEM);
    assert_int_equal(f.n, 0);
    assert_int_equal(qos_evict_run(NULL, 0, NULL, 0, fake_evict, &f, &res), 0);
    assert_int_equal(res.nevicted, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_evicted),
        cmocka_unit_test(test_evicted_oom),
        cmocka_unit_test(test_round_single_task),
        cmocka_unit_test(test_round_shared),
        cmocka_unit_test(test_round_batch_request),
        cmocka_unit_test(test_round_oom),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
