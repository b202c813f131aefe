/*
 * Tests for sched/framework/types.c: pod and node decoding into the scheduler's structs. The
 * expected requests are computed by hand from reference scheduler.md 4.2 (PodRequests with
 * sidecars, init containers' max and overhead; the non-zero variant with 100m / 200 MiB per
 * container), toleration matching from 5.3 (core/v1 toleration.go ToleratesTaint) and node
 * selector semantics from component-helpers' nodeaffinity, never copied from the code's output.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/labels.h"
#include "sched/framework/types.h"
#include "schedtest.h"

#define Ki (INT64_C(1024))
#define Mi (Ki * 1024)
#define Gi (Mi * 1024)

static void assert_prefix_at(const char *s, const char *prefix, int line)
{
    if (!s || strncmp(s, prefix, strlen(prefix)))
        fail_msg("line %d: \"%s\" does not start with \"%s\"", line, s ? s : "(null)", prefix);
}
#define assert_prefix(s, p) assert_prefix_at((s), (p), __LINE__)

static void assert_contains_at(const char *s, const char *sub, int line)
{
    if (!s || !strstr(s, sub))
        fail_msg("line %d: \"%s\" does not contain \"%s\"", line, s ? s : "(null)", sub);
}
#define assert_contains(s, sub) assert_contains_at((s), (sub), __LINE__)

/* A label set from JSON (NULL stays NULL). */
static cJSON *L(const char *json)
{
    cJSON *o = json ? cJSON_Parse(json) : NULL;

    if (json && !o)
        fail_msg("bad test JSON: %s", json);
    return o;
}

/* ---- requests (4.2) ---- */

static void test_requests_containers(void **state)
{
    (void)state;
    struct sched_pod *p =
        P("{\"metadata\":{\"name\":\"p\",\"uid\":\"u\"},\"spec\":{\"containers\":["
          "{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"500m\","
          "\"memory\":\"1Gi\"}}},"
          "{\"name\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"1\","
          "\"memory\":\"512Mi\",\"ephemeral-storage\":\"2Gi\"}}}]}}");

    assert_null(p->invalid);
    assert_int_equal(p->req.v[SCHED_RES_CPU], 1500);
    assert_int_equal(p->req.v[SCHED_RES_MEMORY], Gi + 512 * Mi);
    assert_int_equal(p->req.v[SCHED_RES_EPHEMERAL], 2 * Gi);
    assert_int_equal(p->nonzero_cpu, 1500);
    assert_int_equal(p->nonzero_mem, Gi + 512 * Mi);
    assert_false(p->requests_nothing);
    sched_pod_unref(p);
}

static void test_requests_init_max(void **state)
{
    (void)state;
    /* reqs = max(Σ containers, max over init containers), elementwise. */
    struct sched_pod *p =
        P("{\"metadata\":{\"name\":\"p\"},\"spec\":{"
          "\"containers\":[{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"500m\","
          "\"memory\":\"100Mi\"}}}],"
          "\"initContainers\":["
          "{\"name\":\"i0\",\"resources\":{\"requests\":{\"cpu\":\"2\",\"memory\":\"50Mi\"}}},"
          "{\"name\":\"i1\",\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"1Gi\"}}}"
          "]}}");

    assert_null(p->invalid);
    assert_int_equal(p->req.v[SCHED_RES_CPU], 2000);
    assert_int_equal(p->req.v[SCHED_RES_MEMORY], Gi);
    assert_int_equal(p->nonzero_cpu, 2000);
    assert_int_equal(p->nonzero_mem, Gi);
    sched_pod_unref(p);
}

static void test_requests_sidecars_and_overhead(void **state)
{
    (void)state;
    /*
     * By hand, with 4.2's loop:
     *   containers: reqs = 1000m / 1Gi
     *   i0 (regular 2 / 100Mi):      use = 2000 / 100Mi
     *   s1 (sidecar 500m / 200Mi):   reqs = 1500 / 1Gi+200Mi, side = 500 / 200Mi, use = side
     *   i2 (regular 1800m / 2Gi):    use = 2300 / 2Gi+200Mi
     *   s3 (sidecar 300m / 100Mi):   reqs = 1800 / 1Gi+300Mi, side = 800 / 300Mi, use = side
     *   initMax = 2300 / 2Gi+200Mi; reqs = max(reqs, initMax) = 2300 / 2Gi+200Mi
     *   + overhead 100m / 10Mi = 2400 / 2Gi+210Mi
     */
    struct sched_pod *p =
        P("{\"metadata\":{\"name\":\"p\"},\"spec\":{"
          "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\","
          "\"memory\":\"1Gi\"}}}],"
          "\"initContainers\":["
          "{\"name\":\"i0\",\"resources\":{\"requests\":{\"cpu\":\"2\",\"memory\":\"100Mi\"}}},"
          "{\"name\":\"s1\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":"
          "\"500m\",\"memory\":\"200Mi\"}}},"
          "{\"name\":\"i2\",\"resources\":{\"requests\":{\"cpu\":\"1800m\",\"memory\":\"2Gi\"}}},"
          "{\"name\":\"s3\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":"
          "\"300m\",\"memory\":\"100Mi\"}}}],"
          "\"overhead\":{\"cpu\":\"100m\",\"memory\":\"10Mi\"}}}");

    assert_null(p->invalid);
    assert_int_equal(p->req.v[SCHED_RES_CPU], 2400);
    assert_int_equal(p->req.v[SCHED_RES_MEMORY], 2 * Gi + 210 * Mi);
    /* Every container states cpu and memory: the non-zero variant is the same. */
    assert_int_equal(p->nonzero_cpu, 2400);
    assert_int_equal(p->nonzero_mem, 2 * Gi + 210 * Mi);
    sched_pod_unref(p);
}

static void test_requests_sidecar_dominates(void **state)
{
    (void)state;
    /*
     * Sidecars after the last regular init container stay in reqs: containers 100m + sidecar
     * 1 = 1100m, while the regular init container before it (600m) is the max of the init
     * phase: reqs = max(1100, 600) = 1100.
     */
    struct sched_pod *p =
        P("{\"metadata\":{\"name\":\"p\"},\"spec\":{"
          "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}],"
          "\"initContainers\":["
          "{\"name\":\"i0\",\"resources\":{\"requests\":{\"cpu\":\"600m\"}}},"
          "{\"name\":\"s1\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":"
          "\"1\"}}}]}}");

    assert_int_equal(p->req.v[SCHED_RES_CPU], 1100);
    assert_int_equal(p->req.v[SCHED_RES_MEMORY], 0);
    /* Non-zero memory: 200Mi for c plus 200Mi for the sidecar = 400Mi, more than the init
     * phase's max (200Mi, i0 or the sidecar alone). */
    assert_int_equal(p->nonzero_cpu, 1100);
    assert_int_equal(p->nonzero_mem, 400 * Mi);
    sched_pod_unref(p);
}

static void test_requests_nonzero_defaults(void **state)
{
    (void)state;
    /* c0 states nothing (100m, 200Mi), c1 states explicit zeros (kept 0), c2 cpu only. */
    struct sched_pod *p =
        P("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":["
          "{\"name\":\"c0\"},"
          "{\"name\":\"c1\",\"resources\":{\"requests\":{\"cpu\":\"0\",\"memory\":\"0\"}}},"
          "{\"name\":\"c2\",\"resources\":{\"requests\":{\"cpu\":\"250m\"}}}],"
          "\"initContainers\":[{\"name\":\"i0\"}]}}");

    assert_null(p->invalid);
    assert_int_equal(p->req.v[SCHED_RES_CPU], 250);
    assert_int_equal(p->req.v[SCHED_RES_MEMORY], 0);
    assert_int_equal(p->nonzero_cpu, 100 + 0 + 250);
    assert_int_equal(p->nonzero_mem, 200 * Mi + 0 + 200 * Mi);
    assert_int_equal(SCHED_DEFAULT_MILLI_CPU, 100);
    assert_int_equal(SCHED_DEFAULT_MEMORY, 209715200);
    sched_pod_unref(p);

    /* Nothing at all: the plain requests are zero, the non-zero ones the defaults. */
    p = P("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
    assert_true(p->requests_nothing);
    assert_int_equal(p->req.v[SCHED_RES_CPU], 0);
    assert_int_equal(p->nonzero_cpu, 100);
    assert_int_equal(p->nonzero_mem, 200 * Mi);
    sched_pod_unref(p);

    /* An init container without requests counts the defaults in the init phase's max: with a
     * container requesting 50m / 10Mi, the non-zero result is max(50, 100) / max(10Mi, 200Mi). */
    p = P("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\","
          "\"resources\":{\"requests\":{\"cpu\":\"50m\",\"memory\":\"10Mi\"}}}],"
          "\"initContainers\":[{\"name\":\"i\"}]}}");
    assert_int_equal(p->req.v[SCHED_RES_CPU], 50);
    assert_int_equal(p->nonzero_cpu, 100);
    assert_int_equal(p->nonzero_mem, 200 * Mi);
    sched_pod_unref(p);
}

static void test_requests_nothing(void **state)
{
    (void)state;
    static const struct {
        const char *requests;
        bool nothing;
    } rows[] = {
        /* fit.go: MilliCPU, Memory, EphemeralStorage all 0 and no scalar resource at all. */
        {"{}", true},
        {"{\"cpu\":\"0\"}", true},
        {"{\"cpu\":\"0\",\"memory\":\"0\",\"ephemeral-storage\":\"0\"}", true},
        {"{\"pods\":\"1\"}", true},
        {"{\"cpu\":\"1m\"}", false},
        {"{\"memory\":\"1\"}", false},
        {"{\"ephemeral-storage\":\"1Ki\"}", false},
        /* A scalar resource listed, even at 0, is an entry of ScalarResources. */
        {"{\"example.com/foo\":\"0\"}", false},
        {"{\"example.com/foo\":\"1\"}", false},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char json[512];
        struct sched_pod *p;
        (void)snprintf(json, sizeof(json),
                       "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\","
                       "\"resources\":{\"requests\":%s}}]}}",
                       rows[i].requests);
        p = P(json);
        if (p->requests_nothing != rows[i].nothing)
            fail_msg("requests %s: requests_nothing %d, want %d", rows[i].requests,
                     p->requests_nothing, rows[i].nothing);
        sched_pod_unref(p);
    }
}

static void test_requests_scalar_resources(void **state)
{
    (void)state;
    int before = sched_res_count(), batch_cpu, batch_mem, gpu, huge;
    static const char pod_json[] =
        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":["
        "{\"name\":\"a\",\"resources\":{\"requests\":{\"kubernetes.io/batch-cpu\":\"1500\","
        "\"kubernetes.io/batch-memory\":\"2Gi\",\"pods\":\"3\",\"foo\":\"1\"}}},"
        "{\"name\":\"b\",\"resources\":{\"requests\":{\"kubernetes.io/batch-cpu\":\"500\","
        "\"example.com/gpu\":\"2\",\"hugepages-2Mi\":\"4Mi\",\"example.com/zero\":\"0\"}}}]}}";
    struct sched_pod *p = P(pod_json);
    struct sched_node *n;

    /* A pod interns nothing: the scalars no node offers yet are listed once each (a request
     * of 0 is no request), and the pod still requests something. */
    assert_null(p->invalid);
    assert_int_equal(sched_res_count(), before);
    assert_int_equal(p->nunoffered, 4);
    assert_string_equal(p->unoffered[0], "kubernetes.io/batch-cpu");
    assert_string_equal(p->unoffered[1], "kubernetes.io/batch-memory");
    assert_string_equal(p->unoffered[2], "example.com/gpu");
    assert_string_equal(p->unoffered[3], "hugepages-2Mi");
    assert_false(p->requests_nothing);
    sched_pod_unref(p);

    /* A node's allocatable interns them; the pod decoded again counts them. */
    n = N("{\"metadata\":{\"name\":\"n\"},\"status\":{\"allocatable\":{"
          "\"kubernetes.io/batch-cpu\":\"4000\",\"kubernetes.io/batch-memory\":\"8Gi\","
          "\"example.com/gpu\":\"4\",\"hugepages-2Mi\":\"64Mi\",\"pods\":\"110\"}}}");
    sched_node_unref(n);
    p = P(pod_json);
    assert_null(p->invalid);
    assert_int_equal(p->nunoffered, 0);
    batch_cpu = sched_res_lookup("kubernetes.io/batch-cpu");
    batch_mem = sched_res_lookup("kubernetes.io/batch-memory");
    gpu = sched_res_lookup("example.com/gpu");
    huge = sched_res_lookup("hugepages-2Mi");
    assert_true(batch_cpu >= SCHED_RES_FIRST_SCALAR);
    assert_true(batch_mem >= SCHED_RES_FIRST_SCALAR);
    assert_true(gpu >= SCHED_RES_FIRST_SCALAR);
    assert_true(huge >= SCHED_RES_FIRST_SCALAR);
    assert_int_equal(sched_res_count(), before + 4);
    assert_string_equal(sched_res_name(batch_cpu), "kubernetes.io/batch-cpu");
    assert_string_equal(sched_res_name(huge), "hugepages-2Mi");
    assert_int_equal(sched_res_index("kubernetes.io/batch-cpu"), batch_cpu);
    assert_int_equal(p->req.v[batch_cpu], 2000);
    assert_int_equal(p->req.v[batch_mem], 2 * Gi);
    assert_int_equal(p->req.v[gpu], 2);
    assert_int_equal(p->req.v[huge], 4 * Mi);
    /* pods and plain unknown names are not counted. */
    assert_int_equal(sched_res_lookup("pods"), -ENOENT);
    assert_int_equal(sched_res_index("pods"), -ENOENT);
    assert_int_equal(sched_res_index("foo"), -ENOENT);
    assert_int_equal(sched_res_lookup("attachable-volumes-x"), -ENOENT);
    /* The fixed names. */
    assert_int_equal(sched_res_index("cpu"), SCHED_RES_CPU);
    assert_int_equal(sched_res_index("memory"), SCHED_RES_MEMORY);
    assert_int_equal(sched_res_index("ephemeral-storage"), SCHED_RES_EPHEMERAL);
    /* Extended resources leave the non-zero values at their defaults. */
    assert_int_equal(p->nonzero_cpu, 200);
    assert_int_equal(p->nonzero_mem, 400 * Mi);
    sched_pod_unref(p);
}

static void test_requests_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        const char *prefix; /* of invalid */
        const char *contains;
    } rows[] = {
        {"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"lots\"}}}]",
         "spec.containers[0].resources.requests.cpu: Invalid value: ", "regular expression"},
        {"\"containers\":[{\"name\":\"a\"},{\"name\":\"b\",\"resources\":{\"requests\":{"
         "\"memory\":\"1Zi\"}}}]",
         "spec.containers[1].resources.requests.memory: Invalid value: ", "regular expression"},
        {"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":5}}}]",
         "spec.containers[0].resources.requests.cpu: Invalid value: ", NULL},
        {"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"-1\"}}}]",
         "spec.containers[0].resources.requests.cpu: Invalid value: ",
         "must be greater than or equal to 0"},
        {"\"containers\":[{\"name\":\"c\"}],\"initContainers\":[{\"name\":\"i\",\"resources\":{"
         "\"requests\":{\"example.com/x\":\"1..2\"}}}]",
         "spec.initContainers[0].resources.requests.example.com/x: Invalid value: ", NULL},
        {"\"containers\":[{\"name\":\"c\"}],\"overhead\":{\"cpu\":\"x\"}",
         "spec.overhead.cpu: Invalid value: ", NULL},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char json[1024];
        struct sched_pod *p;
        (void)snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"p\"},\"spec\":{%s}}",
                       rows[i].spec);
        p = P(json);
        assert_prefix(p->invalid, rows[i].prefix);
        if (rows[i].contains)
            assert_contains(p->invalid, rows[i].contains);
        sched_pod_unref(p);
    }
}

static void test_requests_malformed_keeps_the_rest(void **state)
{
    (void)state;
    /* Only the first problem is named; the valid entries are still counted. */
    struct sched_pod *p =
        P("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":["
          "{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"bad\",\"memory\":\"1Gi\"}}},"
          "{\"name\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"200m\",\"memory\":\"x\"}}}]}}");

    assert_prefix(p->invalid, "spec.containers[0].resources.requests.cpu: ");
    assert_null(strstr(p->invalid, "containers[1]"));
    assert_int_equal(p->req.v[SCHED_RES_CPU], 200);
    assert_int_equal(p->req.v[SCHED_RES_MEMORY], Gi);
    sched_pod_unref(p);
}

/* ---- pod metadata, ports, gates ---- */

static void test_pod_fields(void **state)
{
    (void)state;
    struct sched_pod *p =
        P("{\"metadata\":{\"name\":\"web-0\",\"namespace\":\"prod\",\"uid\":\"u-1\","
          "\"resourceVersion\":\"42\",\"labels\":{\"app\":\"web\"},"
          "\"creationTimestamp\":\"2024-01-02T03:04:05Z\","
          "\"deletionTimestamp\":\"2024-01-02T03:05:05Z\","
          "\"ownerReferences\":[{\"kind\":\"Other\",\"uid\":\"o0\"},"
          "{\"kind\":\"StatefulSet\",\"uid\":\"o1\",\"controller\":true}]},"
          "\"spec\":{\"nodeName\":\"n1\",\"schedulerName\":\"koord-scheduler\",\"priority\":100,"
          "\"preemptionPolicy\":\"Never\",\"containers\":[{\"name\":\"c\"}]},"
          "\"status\":{\"phase\":\"Failed\",\"nominatedNodeName\":\"n2\"}}");

    assert_string_equal(p->uid, "u-1");
    assert_string_equal(p->namespace, "prod");
    assert_string_equal(p->name, "web-0");
    assert_string_equal(p->key, "prod/web-0");
    assert_string_equal(p->resource_version, "42");
    assert_string_equal(p->node_name, "n1");
    assert_string_equal(p->scheduler_name, "koord-scheduler");
    assert_string_equal(p->nominated_node, "n2");
    assert_int_equal(p->priority, 100);
    assert_true(p->preempt_never);
    assert_true(p->deleting);
    assert_true(p->terminal);
    assert_true(p->created == 1704164645.0);
    assert_string_equal(sched_label(p->labels, "app"), "web");
    assert_null(sched_label(p->labels, "x"));
    assert_string_equal(p->owner_kind, "StatefulSet");
    assert_string_equal(p->owner_uid, "o1");
    assert_string_equal(p->gates, "");
    assert_int_equal(p->ngates, 0);
    assert_null(p->invalid);
    sched_pod_unref(p);

    /* Defaults. */
    p = P("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
    assert_string_equal(p->namespace, "default");
    assert_string_equal(p->key, "default/x");
    assert_string_equal(p->node_name, "");
    assert_string_equal(p->scheduler_name, "default-scheduler");
    assert_string_equal(p->nominated_node, "");
    assert_string_equal(p->owner_kind, "");
    assert_int_equal(p->priority, 0);
    assert_false(p->preempt_never);
    assert_false(p->deleting);
    assert_false(p->terminal);
    assert_null(p->labels);
    sched_pod_unref(p);
}

static void test_pod_ref(void **state)
{
    (void)state;
    struct sched_pod *p = P("{\"metadata\":{\"name\":\"x\"}}");

    assert_ptr_equal(sched_pod_ref(p), p);
    assert_int_equal(p->refs, 2);
    assert_null(sched_pod_unref(p));
    assert_int_equal(p->refs, 1);
    assert_null(sched_pod_unref(p));
    assert_null(sched_pod_unref(NULL));
    assert_null(sched_pod_ref(NULL));
}

static void test_pod_gates(void **state)
{
    (void)state;
    struct sched_pod *p = P("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"schedulingGates\":["
                            "{\"name\":\"example.com/a\"},{\"name\":\"b\"}]}}");

    assert_int_equal(p->ngates, 2);
    assert_string_equal(p->gates, "example.com/a b");
    sched_pod_unref(p);
}

static void test_pod_ports(void **state)
{
    (void)state;
    /*
     * Host ports of the containers and of sidecar init containers (they run for the whole
     * life of the pod; schedutil.GetHostPorts); never of regular init containers, which
     * kube-scheduler ignores. hostPort 0 or absent is no host port.
     */
    struct sched_pod *p =
        P("{\"metadata\":{\"name\":\"x\"},\"spec\":{"
          "\"containers\":[{\"name\":\"c\",\"ports\":[{\"containerPort\":80,\"hostPort\":8080},"
          "{\"containerPort\":53,\"hostPort\":53,\"protocol\":\"UDP\",\"hostIP\":\"10.0.0.1\"},"
          "{\"containerPort\":9,\"hostPort\":0},{\"containerPort\":10},"
          "{\"containerPort\":7,\"hostPort\":7,\"protocol\":\"SCTP\"}]}],"
          "\"initContainers\":[{\"name\":\"i\",\"ports\":[{\"containerPort\":1,\"hostPort\":1}]},"
          "{\"name\":\"s\",\"restartPolicy\":\"Always\",\"ports\":[{\"containerPort\":2,"
          "\"hostPort\":2}]}]}}");
    bool seen[4] = {false};

    assert_int_equal(p->nports, 4);
    for (size_t i = 0; i < p->nports; i++) {
        const struct sched_host_port *h = &p->ports[i];
        switch (h->port) {
        case 8080:
            assert_string_equal(h->ip, "0.0.0.0");
            assert_int_equal(h->protocol, 0);
            seen[0] = true;
            break;
        case 53:
            assert_string_equal(h->ip, "10.0.0.1");
            assert_int_equal(h->protocol, 1);
            seen[1] = true;
            break;
        case 7:
            assert_string_equal(h->ip, "0.0.0.0");
            assert_int_equal(h->protocol, 2);
            seen[2] = true;
            break;
        case 2:
            seen[3] = true;
            break;
        default:
            fail_msg("unexpected host port %d", h->port);
        }
    }
    assert_true(seen[0] && seen[1] && seen[2] && seen[3]);
    sched_pod_unref(p);
}

/* ---- tolerations (5.3 "Toleration match") ---- */

static void test_toleration_matches(void **state)
{
    (void)state;
    /* Rows hold their strings in arrays: the structs' members are not const. */
    struct tol_row {
        char tkey[8], tvalue[8];
        bool exists;
        enum sched_effect teffect;
        char key[8], value[8];
        enum sched_effect effect;
        bool want;
        const char *why;
    };
    static const struct tol_row rows[] = {
        {"k", "v", false, SCHED_EFFECT_ANY, "k", "v", SCHED_EFFECT_NO_EXECUTE, true,
         "empty effect matches any effect"},
        {"k", "v", false, SCHED_EFFECT_ANY, "k", "v", SCHED_EFFECT_PREFER_NO_SCHEDULE, true,
         "empty effect matches PreferNoSchedule"},
        {"k", "v", false, SCHED_EFFECT_NO_SCHEDULE, "k", "v", SCHED_EFFECT_NO_SCHEDULE, true,
         "same effect"},
        {"k", "v", false, SCHED_EFFECT_NO_SCHEDULE, "k", "v", SCHED_EFFECT_NO_EXECUTE, false,
         "other effect"},
        {"k", "v", false, SCHED_EFFECT_NO_SCHEDULE, "k", "v", SCHED_EFFECT_PREFER_NO_SCHEDULE,
         false, "NoSchedule does not tolerate PreferNoSchedule"},
        {"", "", true, SCHED_EFFECT_ANY, "any", "thing", SCHED_EFFECT_NO_EXECUTE, true,
         "empty key with Exists matches every taint"},
        {"", "", true, SCHED_EFFECT_NO_SCHEDULE, "any", "thing", SCHED_EFFECT_NO_SCHEDULE, true,
         "empty key with Exists and an effect: every key of that effect"},
        {"", "", true, SCHED_EFFECT_NO_SCHEDULE, "any", "thing", SCHED_EFFECT_NO_EXECUTE, false,
         "empty key with Exists and another effect"},
        {"k", "", true, SCHED_EFFECT_ANY, "k", "whatever", SCHED_EFFECT_NO_SCHEDULE, true,
         "Exists ignores the value"},
        {"k", "v", true, SCHED_EFFECT_ANY, "k", "other", SCHED_EFFECT_NO_SCHEDULE, true,
         "Exists ignores even a stated value"},
        {"k", "", true, SCHED_EFFECT_ANY, "k2", "", SCHED_EFFECT_NO_SCHEDULE, false,
         "Exists with another key"},
        {"k", "v", false, SCHED_EFFECT_ANY, "k", "w", SCHED_EFFECT_NO_SCHEDULE, false,
         "Equal compares values"},
        {"k", "", false, SCHED_EFFECT_ANY, "k", "", SCHED_EFFECT_NO_SCHEDULE, true,
         "Equal with both values empty"},
        {"k", "", false, SCHED_EFFECT_ANY, "k", "v", SCHED_EFFECT_NO_SCHEDULE, false,
         "Equal with an empty value against a value"},
        {"k", "v", false, SCHED_EFFECT_ANY, "k2", "v", SCHED_EFFECT_NO_SCHEDULE, false,
         "other key"},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct tol_row r = rows[i];
        struct sched_toleration t = {r.tkey, r.tvalue, r.exists, r.teffect};
        struct sched_taint taint = {r.key, r.value, r.effect};
        if (sched_toleration_matches(&t, &taint) != r.want)
            fail_msg("row %zu (%s): got %d", i, r.why, !r.want);
    }
}

static void test_tolerations_decoded(void **state)
{
    (void)state;
    struct sched_pod *p =
        P("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"tolerations\":["
          "{\"key\":\"a\",\"value\":\"1\",\"effect\":\"NoSchedule\"},"
          "{\"key\":\"b\",\"operator\":\"Exists\",\"effect\":\"NoExecute\"},"
          "{\"key\":\"c\",\"operator\":\"Equal\",\"value\":\"2\",\"effect\":\"PreferNoSchedule\"},"
          "{\"operator\":\"Exists\",\"effect\":\"\"}]}}");
    char a[] = "a", one[] = "1", two[] = "2", z[] = "z", empty[] = "";
    struct sched_taint t_a = {a, one, SCHED_EFFECT_NO_SCHEDULE};
    struct sched_taint t_a2 = {a, two, SCHED_EFFECT_NO_SCHEDULE};
    struct sched_taint t_z = {z, empty, SCHED_EFFECT_NO_EXECUTE};

    assert_null(p->invalid);
    assert_int_equal(p->ntolerations, 4);
    assert_string_equal(p->tolerations[0].key, "a");
    assert_string_equal(p->tolerations[0].value, "1");
    assert_false(p->tolerations[0].exists); /* no operator = Equal */
    assert_int_equal(p->tolerations[0].effect, SCHED_EFFECT_NO_SCHEDULE);
    assert_true(p->tolerations[1].exists);
    assert_string_equal(p->tolerations[1].value, "");
    assert_int_equal(p->tolerations[1].effect, SCHED_EFFECT_NO_EXECUTE);
    assert_false(p->tolerations[2].exists);
    assert_int_equal(p->tolerations[2].effect, SCHED_EFFECT_PREFER_NO_SCHEDULE);
    assert_string_equal(p->tolerations[3].key, "");
    assert_int_equal(p->tolerations[3].effect, SCHED_EFFECT_ANY);
    assert_true(sched_pod_tolerates(p, &t_a));
    assert_true(sched_pod_tolerates(p, &t_z)); /* by the catch-all */
    sched_pod_unref(p);

    p = P("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"tolerations\":[{\"key\":\"a\","
          "\"value\":\"1\",\"effect\":\"NoSchedule\"}]}}");
    assert_true(sched_pod_tolerates(p, &t_a));
    assert_false(sched_pod_tolerates(p, &t_a2));
    sched_pod_unref(p);

    p = P("{\"metadata\":{\"name\":\"x\"},\"spec\":{}}");
    assert_false(sched_pod_tolerates(p, &t_a));
    sched_pod_unref(p);

    p = P("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"tolerations\":[{\"key\":\"a\"},"
          "{\"key\":\"a\",\"operator\":\"Matches\"}]}}");
    assert_prefix(p->invalid, "spec.tolerations[1].operator: Unsupported value: \"Matches\"");
    sched_pod_unref(p);

    p = P("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"tolerations\":[{\"key\":\"a\","
          "\"effect\":\"Sometimes\"}]}}");
    assert_prefix(p->invalid, "spec.tolerations[0].effect: Unsupported value: \"Sometimes\"");
    sched_pod_unref(p);
}

/* ---- node selectors ---- */

/* A pod whose required node affinity is the one term given (JSON of a NodeSelectorTerm). */
static struct sched_pod *pod_with_term(const char *term)
{
    char json[2048];

    (void)snprintf(json, sizeof(json),
                   "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"affinity\":{\"nodeAffinity\":{"
                   "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":["
                   "%s]}}}}}",
                   term);
    return P(json);
}

static void test_selector_requirements(void **state)
{
    (void)state;
    static const struct {
        const char *expr;   /* one matchExpressions entry */
        const char *labels; /* JSON object or NULL */
        bool want;
    } rows[] = {
        {"{\"key\":\"a\",\"operator\":\"In\",\"values\":[\"x\",\"y\"]}", "{\"a\":\"y\"}", true},
        {"{\"key\":\"a\",\"operator\":\"In\",\"values\":[\"x\",\"y\"]}", "{\"a\":\"z\"}", false},
        {"{\"key\":\"a\",\"operator\":\"In\",\"values\":[\"x\"]}", "{\"b\":\"x\"}", false},
        {"{\"key\":\"a\",\"operator\":\"In\",\"values\":[\"x\"]}", NULL, false},
        {"{\"key\":\"a\",\"operator\":\"NotIn\",\"values\":[\"x\"]}", "{\"a\":\"y\"}", true},
        {"{\"key\":\"a\",\"operator\":\"NotIn\",\"values\":[\"x\"]}", "{\"a\":\"x\"}", false},
        /* NotIn on an absent label matches (labels.Requirement.Matches). */
        {"{\"key\":\"a\",\"operator\":\"NotIn\",\"values\":[\"x\"]}", "{\"b\":\"x\"}", true},
        {"{\"key\":\"a\",\"operator\":\"NotIn\",\"values\":[\"x\"]}", NULL, true},
        {"{\"key\":\"a\",\"operator\":\"Exists\"}", "{\"a\":\"\"}", true},
        {"{\"key\":\"a\",\"operator\":\"Exists\"}", "{\"b\":\"1\"}", false},
        {"{\"key\":\"a\",\"operator\":\"DoesNotExist\"}", "{\"b\":\"1\"}", true},
        {"{\"key\":\"a\",\"operator\":\"DoesNotExist\"}", NULL, true},
        {"{\"key\":\"a\",\"operator\":\"DoesNotExist\"}", "{\"a\":\"1\"}", false},
        /* Gt / Lt: integer comparison of the label's value; absent or non-numeric fails. */
        {"{\"key\":\"n\",\"operator\":\"Gt\",\"values\":[\"5\"]}", "{\"n\":\"6\"}", true},
        {"{\"key\":\"n\",\"operator\":\"Gt\",\"values\":[\"5\"]}", "{\"n\":\"5\"}", false},
        {"{\"key\":\"n\",\"operator\":\"Gt\",\"values\":[\"5\"]}", "{\"n\":\"10\"}", true},
        {"{\"key\":\"n\",\"operator\":\"Gt\",\"values\":[\"-3\"]}", "{\"n\":\"-2\"}", true},
        {"{\"key\":\"n\",\"operator\":\"Gt\",\"values\":[\"5\"]}", "{\"n\":\"abc\"}", false},
        {"{\"key\":\"n\",\"operator\":\"Gt\",\"values\":[\"5\"]}", "{\"n\":\"6.5\"}", false},
        {"{\"key\":\"n\",\"operator\":\"Gt\",\"values\":[\"5\"]}", "{\"m\":\"9\"}", false},
        {"{\"key\":\"n\",\"operator\":\"Lt\",\"values\":[\"5\"]}", "{\"n\":\"4\"}", true},
        {"{\"key\":\"n\",\"operator\":\"Lt\",\"values\":[\"5\"]}", "{\"n\":\"5\"}", false},
        {"{\"key\":\"n\",\"operator\":\"Lt\",\"values\":[\"5\"]}", "{\"n\":\"-10\"}", true},
        {"{\"key\":\"n\",\"operator\":\"Lt\",\"values\":[\"5\"]}", NULL, false},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char term[512];
        struct sched_pod *p;
        cJSON *labels = L(rows[i].labels);
        bool got;
        (void)snprintf(term, sizeof(term), "{\"matchExpressions\":[%s]}", rows[i].expr);
        p = pod_with_term(term);
        if (p->invalid)
            fail_msg("row %zu: %s", i, p->invalid);
        assert_non_null(p->required_node);
        assert_int_equal(p->required_node->nterms, 1);
        assert_int_equal(p->required_node->terms[0].nexprs, 1);
        got = sched_sel_req_matches(&p->required_node->terms[0].exprs[0], labels);
        if (got != rows[i].want)
            fail_msg("row %zu: %s on %s: got %d", i, rows[i].expr,
                     rows[i].labels ? rows[i].labels : "(none)", got);
        assert_int_equal(sched_node_selector_matches(p->required_node, labels, "n"), rows[i].want);
        cJSON_Delete(labels);
        sched_pod_unref(p);
    }
}

static void test_selector_terms(void **state)
{
    (void)state;
    cJSON *labels = L("{\"zone\":\"a\",\"disk\":\"ssd\"}");
    struct sched_pod *p;

    /* matchFields metadata.name. */
    p = pod_with_term("{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
                      "\"values\":[\"n1\"]}]}");
    assert_null(p->invalid);
    assert_true(sched_node_selector_matches(p->required_node, labels, "n1"));
    assert_false(sched_node_selector_matches(p->required_node, labels, "n2"));
    assert_false(sched_node_term_matches(&p->required_node->terms[0], NULL, NULL));
    sched_pod_unref(p);
    p = pod_with_term("{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"NotIn\","
                      "\"values\":[\"n1\"]}]}");
    assert_false(sched_node_selector_matches(p->required_node, labels, "n1"));
    assert_true(sched_node_selector_matches(p->required_node, labels, "n2"));
    sched_pod_unref(p);

    /* A term is the AND of its expressions and fields. */
    p = pod_with_term("{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\","
                      "\"values\":[\"a\"]},{\"key\":\"disk\",\"operator\":\"Exists\"}],"
                      "\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
                      "\"values\":[\"n1\"]}]}");
    assert_true(sched_node_selector_matches(p->required_node, labels, "n1"));
    assert_false(sched_node_selector_matches(p->required_node, labels, "n2"));
    sched_pod_unref(p);

    /* An empty term matches nothing, even alone; the terms are ORed. */
    p = pod_with_term("{}");
    assert_null(p->invalid);
    assert_int_equal(p->required_node->nterms, 1);
    assert_false(sched_node_selector_matches(p->required_node, labels, "n1"));
    assert_false(sched_node_selector_matches(p->required_node, NULL, "n1"));
    sched_pod_unref(p);
    p = pod_with_term("{\"matchExpressions\":[]},{\"matchExpressions\":[{\"key\":\"zone\","
                      "\"operator\":\"In\",\"values\":[\"b\"]}]},{\"matchExpressions\":[{\"key\":"
                      "\"zone\",\"operator\":\"In\",\"values\":[\"a\"]}]}");
    assert_int_equal(p->required_node->nterms, 3);
    assert_true(sched_node_selector_matches(p->required_node, labels, "n1"));
    assert_false(sched_node_term_matches(&p->required_node->terms[0], labels, "n1"));
    assert_false(sched_node_term_matches(&p->required_node->terms[1], labels, "n1"));
    assert_true(sched_node_term_matches(&p->required_node->terms[2], labels, "n1"));
    sched_pod_unref(p);

    /* No terms at all: nothing matches. */
    p = P("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"affinity\":{\"nodeAffinity\":{"
          "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[]}}}}}");
    assert_non_null(p->required_node);
    assert_false(sched_node_selector_matches(p->required_node, labels, "n1"));
    sched_pod_unref(p);

    /* No required node affinity: NULL. */
    p = P("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"affinity\":{\"nodeAffinity\":{}}}}");
    assert_null(p->required_node);
    sched_pod_unref(p);
    cJSON_Delete(labels);
}

static void test_selector_invalid(void **state)
{
    (void)state;
    /* The field path and the kind of error; the wording after it is not the point here (the
     * API server rejects such pods first). */
#define TERM0                                                                                      \
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."                   \
    "nodeSelectorTerms[0]"
    static const struct {
        const char *term;
        const char *prefix;
    } rows[] = {
        {"{\"matchFields\":[{\"key\":\"metadata.labels\",\"operator\":\"In\",\"values\":[\"a\"]}]}",
         TERM0 ".matchFields[0].key: Invalid value: \"metadata.labels\""},
        {"{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"a\","
         "\"b\"]}]}",
         TERM0 ".matchFields[0].values: "},
        {"{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"Exists\"}]}",
         TERM0 ".matchFields[0].operator: "},
        {"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Foo\"}]}",
         TERM0 ".matchExpressions[0].operator: "},
        {"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\"},{\"key\":\"n\","
         "\"operator\":\"Gt\",\"values\":[\"1\",\"2\"]}]}",
         TERM0 ".matchExpressions[1].values: Required value: "},
        {"{\"matchExpressions\":[{\"key\":\"n\",\"operator\":\"Lt\",\"values\":[\"x\"]}]}",
         TERM0 ".matchExpressions[0].values: "},
        {"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\"}]}",
         TERM0 ".matchExpressions[0].values: Required value: "},
        {"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\",\"values\":[\"x\"]}]}",
         TERM0 ".matchExpressions[0].values: Forbidden: "},
        {"{\"matchExpressions\":[{\"operator\":\"Exists\"}]}",
         TERM0 ".matchExpressions[0].key: Required value"},
        {"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\"}]},{\"matchFields\":[{"
         "\"key\":\"metadata.name\",\"operator\":\"In\"}]}",
         "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
         "nodeSelectorTerms[1].matchFields[0].values: "},
    };
#undef TERM0

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct sched_pod *p = pod_with_term(rows[i].term);
        assert_prefix(p->invalid, rows[i].prefix);
        sched_pod_unref(p);
    }
}

static void test_node_selector_and_preferred(void **state)
{
    (void)state;
    struct sched_pod *p =
        P("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"nodeSelector\":{\"zone\":\"a\","
          "\"disk\":\"ssd\"},\"affinity\":{\"nodeAffinity\":{"
          "\"preferredDuringSchedulingIgnoredDuringExecution\":["
          "{\"weight\":10,\"preference\":{\"matchExpressions\":[{\"key\":\"gpu\","
          "\"operator\":\"Exists\"}]}},"
          "{\"weight\":3,\"preference\":{}}]}}}}");
    cJSON *both = L("{\"zone\":\"a\",\"disk\":\"ssd\",\"gpu\":\"1\"}");
    cJSON *one = L("{\"zone\":\"a\"}");
    bool all;

    assert_null(p->invalid);
    assert_int_equal(p->nnode_selector, 2);
    all = true;
    for (size_t i = 0; i < p->nnode_selector; i++) {
        assert_int_equal(p->node_selector[i].op, SCHED_OP_IN);
        all &= sched_sel_req_matches(&p->node_selector[i], both);
    }
    assert_true(all);
    all = true;
    for (size_t i = 0; i < p->nnode_selector; i++)
        all &= sched_sel_req_matches(&p->node_selector[i], one);
    assert_false(all);
    assert_null(p->required_node);
    assert_int_equal(p->npreferred_node, 2);
    assert_int_equal(p->preferred_node[0].weight, 10);
    assert_true(sched_node_term_matches(&p->preferred_node[0].term, both, "n"));
    assert_false(sched_node_term_matches(&p->preferred_node[0].term, one, "n"));
    assert_int_equal(p->preferred_node[1].weight, 3);
    assert_false(sched_node_term_matches(&p->preferred_node[1].term, both, "n"));
    cJSON_Delete(both);
    cJSON_Delete(one);
    sched_pod_unref(p);
}

/* ---- topology spread ---- */

static void test_spread(void **state)
{
    (void)state;
    struct sched_pod *p =
        P("{\"metadata\":{\"name\":\"x\",\"labels\":{\"app\":\"web\",\"pod-template-hash\":"
          "\"abc\"}},\"spec\":{\"topologySpreadConstraints\":["
          "{\"maxSkew\":1,\"topologyKey\":\"topology.kubernetes.io/zone\","
          "\"whenUnsatisfiable\":\"DoNotSchedule\",\"labelSelector\":{\"matchLabels\":{\"app\":"
          "\"web\"}},\"matchLabelKeys\":[\"pod-template-hash\",\"absent\"],\"minDomains\":3,"
          "\"nodeTaintsPolicy\":\"Honor\",\"nodeAffinityPolicy\":\"Ignore\"},"
          "{\"maxSkew\":2,\"topologyKey\":\"kubernetes.io/hostname\","
          "\"whenUnsatisfiable\":\"ScheduleAnyway\",\"labelSelector\":{\"matchExpressions\":[{"
          "\"key\":\"app\",\"operator\":\"Exists\"}]}},"
          "{\"maxSkew\":1,\"topologyKey\":\"k\",\"whenUnsatisfiable\":\"ScheduleAnyway\","
          "\"matchLabelKeys\":[\"app\"]}]}}");
    cJSON *same = L("{\"app\":\"web\",\"pod-template-hash\":\"abc\"}");
    cJSON *older = L("{\"app\":\"web\",\"pod-template-hash\":\"xyz\"}");
    cJSON *nohash = L("{\"app\":\"web\"}");

    assert_null(p->invalid);
    assert_int_equal(p->nspread, 3);
    assert_int_equal(p->spread[0].max_skew, 1);
    assert_string_equal(p->spread[0].topology_key, "topology.kubernetes.io/zone");
    assert_true(p->spread[0].do_not_schedule);
    assert_int_equal(p->spread[0].min_domains, 3);
    assert_true(p->spread[0].honor_taints);
    assert_true(p->spread[0].ignore_affinity);
    /* matchLabelKeys: "pod-template-hash in (abc)" joins the selector; absent keys are
     * dropped. */
    assert_non_null(p->spread[0].selector);
    assert_true(label_selector_matches(p->spread[0].selector, same));
    assert_false(label_selector_matches(p->spread[0].selector, older));
    assert_false(label_selector_matches(p->spread[0].selector, nohash));

    assert_int_equal(p->spread[1].max_skew, 2);
    assert_false(p->spread[1].do_not_schedule);
    assert_int_equal(p->spread[1].min_domains, 1);
    assert_false(p->spread[1].honor_taints);
    assert_false(p->spread[1].ignore_affinity);
    assert_true(label_selector_matches(p->spread[1].selector, older));
    /* No labelSelector: selects nothing, with or without matchLabelKeys. */
    assert_null(p->spread[2].selector);
    cJSON_Delete(same);
    cJSON_Delete(older);
    cJSON_Delete(nohash);
    sched_pod_unref(p);
}

static void test_spread_invalid(void **state)
{
    (void)state;
    static const struct {
        const char *c;
        const char *prefix;
    } rows[] = {
        {"{\"maxSkew\":0,\"topologyKey\":\"k\",\"whenUnsatisfiable\":\"DoNotSchedule\"}",
         "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0"},
        {"{\"maxSkew\":1,\"whenUnsatisfiable\":\"DoNotSchedule\"}",
         "spec.topologySpreadConstraints[0].topologyKey: Required value"},
        {"{\"maxSkew\":1,\"topologyKey\":\"k\",\"whenUnsatisfiable\":\"Maybe\"}",
         "spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: \"Maybe\""},
        {"{\"maxSkew\":1,\"topologyKey\":\"k\",\"whenUnsatisfiable\":\"DoNotSchedule\","
         "\"minDomains\":0}",
         "spec.topologySpreadConstraints[0].minDomains: Invalid value: 0"},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char json[1024];
        struct sched_pod *p;
        (void)snprintf(json, sizeof(json),
                       "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"topologySpreadConstraints\":"
                       "[%s]}}",
                       rows[i].c);
        p = P(json);
        assert_prefix(p->invalid, rows[i].prefix);
        sched_pod_unref(p);
    }
}

/* ---- pod (anti-)affinity ---- */

static void test_pod_affinity_terms(void **state)
{
    (void)state;
    struct sched_pod *p =
        P("{\"metadata\":{\"name\":\"x\",\"namespace\":\"ns\"},\"spec\":{\"affinity\":{"
          "\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":["
          "{\"labelSelector\":{\"matchLabels\":{\"app\":\"db\"}},\"namespaces\":[\"a\",\"b\"],"
          "\"topologyKey\":\"zone\"}],"
          "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":30,"
          "\"podAffinityTerm\":{\"labelSelector\":{},\"namespaceSelector\":{},\"topologyKey\":"
          "\"host\"}}]},"
          "\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":["
          "{\"topologyKey\":\"host\"}],"
          "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":100,"
          "\"podAffinityTerm\":{\"labelSelector\":{\"matchExpressions\":[{\"key\":\"app\","
          "\"operator\":\"In\",\"values\":[\"web\"]}]},\"namespaceSelector\":{\"matchLabels\":{"
          "\"team\":\"x\"}},\"topologyKey\":\"zone\"}}]}}}}");
    cJSON *db = L("{\"app\":\"db\"}"), *web = L("{\"app\":\"web\"}");
    cJSON *team = L("{\"team\":\"x\"}");

    assert_null(p->invalid);
    assert_int_equal(p->naffinity, 1);
    assert_true(label_selector_matches(p->affinity[0].selector, db));
    assert_false(label_selector_matches(p->affinity[0].selector, web));
    assert_int_equal(p->affinity[0].nnamespaces, 2);
    assert_string_equal(p->affinity[0].namespaces[0], "a");
    assert_string_equal(p->affinity[0].namespaces[1], "b");
    assert_null(p->affinity[0].ns_selector);
    assert_string_equal(p->affinity[0].topology_key, "zone");
    assert_int_equal(p->affinity[0].weight, 0);

    assert_int_equal(p->npref_affinity, 1);
    assert_int_equal(p->pref_affinity[0].weight, 30);
    /* {} selects everything, as does an empty namespaceSelector. */
    assert_true(label_selector_matches(p->pref_affinity[0].selector, web));
    assert_non_null(p->pref_affinity[0].ns_selector);
    assert_true(label_selector_matches(p->pref_affinity[0].ns_selector, NULL));

    assert_int_equal(p->nanti_affinity, 1);
    assert_null(p->anti_affinity[0].selector); /* absent: matches nothing */
    assert_string_equal(p->anti_affinity[0].topology_key, "host");

    assert_int_equal(p->npref_anti_affinity, 1);
    assert_int_equal(p->pref_anti_affinity[0].weight, 100);
    assert_true(label_selector_matches(p->pref_anti_affinity[0].selector, web));
    assert_true(label_selector_matches(p->pref_anti_affinity[0].ns_selector, team));
    assert_false(label_selector_matches(p->pref_anti_affinity[0].ns_selector, db));
    cJSON_Delete(db);
    cJSON_Delete(web);
    cJSON_Delete(team);
    sched_pod_unref(p);

    p = P("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"affinity\":{\"podAffinity\":{"
          "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":0,"
          "\"podAffinityTerm\":{\"topologyKey\":\"h\"}}]}}}}");
    assert_string_equal(p->invalid, "spec.affinity.podAffinity."
                                    "preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
                                    "Invalid value: 0: must be in the range 1-100");
    sched_pod_unref(p);

    p = P("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"affinity\":{\"podAntiAffinity\":{"
          "\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"labelSelector\":{}}]}}}}");
    assert_prefix(p->invalid, "spec.affinity.podAntiAffinity."
                              "requiredDuringSchedulingIgnoredDuringExecution[0]."
                              "topologyKey: Required value");
    sched_pod_unref(p);
}

/* ---- nodes ---- */

static void test_node_decode(void **state)
{
    (void)state;
    struct sched_node *n =
        N("{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"7\",\"labels\":{\"zone\":\"a\"}},"
          "\"spec\":{\"unschedulable\":true,\"taints\":["
          "{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoSchedule\"},"
          "{\"key\":\"spot\",\"effect\":\"PreferNoSchedule\"},"
          "{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":\"NoExecute\"}]},"
          "\"status\":{\"allocatable\":{\"cpu\":\"3500m\",\"memory\":\"16Gi\",\"pods\":\"110\","
          "\"ephemeral-storage\":\"100Gi\",\"kubernetes.io/batch-cpu\":\"20000\"},"
          "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    int batch = sched_res_lookup("kubernetes.io/batch-cpu");

    assert_null(n->invalid);
    assert_string_equal(n->name, "n1");
    assert_string_equal(n->resource_version, "7");
    assert_string_equal(sched_label(n->labels, "zone"), "a");
    assert_true(n->unschedulable);
    assert_int_equal(n->ntaints, 3);
    assert_string_equal(n->taints[0].key, "dedicated");
    assert_string_equal(n->taints[0].value, "gpu");
    assert_int_equal(n->taints[0].effect, SCHED_EFFECT_NO_SCHEDULE);
    assert_string_equal(n->taints[1].value, "");
    assert_int_equal(n->taints[1].effect, SCHED_EFFECT_PREFER_NO_SCHEDULE);
    assert_int_equal(n->taints[2].effect, SCHED_EFFECT_NO_EXECUTE);
    assert_int_equal(n->allocatable.v[SCHED_RES_CPU], 3500);
    assert_int_equal(n->allocatable.v[SCHED_RES_MEMORY], 16 * Gi);
    assert_int_equal(n->allocatable.v[SCHED_RES_EPHEMERAL], 100 * Gi);
    assert_true(batch >= SCHED_RES_FIRST_SCALAR);
    assert_int_equal(n->allocatable.v[batch], 20000);
    assert_int_equal(n->allowed_pods, 110);
    assert_non_null(n->conditions);
    assert_int_equal(cJSON_GetArraySize(n->conditions), 1);
    assert_ptr_equal(sched_node_ref(n), n);
    assert_null(sched_node_unref(n));
    assert_null(sched_node_unref(n));
    assert_null(sched_node_unref(NULL));

    /* Nothing but a name. */
    n = N("{\"metadata\":{\"name\":\"n2\"}}");
    assert_null(n->invalid);
    assert_null(n->labels);
    assert_false(n->unschedulable);
    assert_int_equal(n->ntaints, 0);
    assert_int_equal(n->allowed_pods, 0);
    assert_int_equal(n->allocatable.v[SCHED_RES_CPU], 0);
    sched_node_unref(n);
}

static void test_node_malformed(void **state)
{
    (void)state;
    /* A malformed allocatable: the node counts as empty (types.h), invalid says why. */
    struct sched_node *n =
        N("{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":{\"cpu\":\"4\","
          "\"memory\":\"lots\",\"pods\":\"110\",\"example.com/gpu\":\"4\"}}}");

    assert_string_equal(n->name, "n1");
    assert_prefix(n->invalid, "status.allocatable.memory: Invalid value: ");
    for (int i = 0; i < SCHED_RES_MAX; i++)
        if (n->allocatable.v[i])
            fail_msg("allocatable[%d] = %lld, want 0", i, (long long)n->allocatable.v[i]);
    assert_int_equal(n->allowed_pods, 0);
    sched_node_unref(n);

    /* A bad taint effect: the taint is left out, the others kept. */
    n = N("{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"taints\":[{\"key\":\"a\",\"effect\":"
          "\"Never\"},{\"key\":\"b\",\"effect\":\"NoSchedule\"}]},\"status\":{\"allocatable\":{"
          "\"cpu\":\"4\"}}}");
    assert_prefix(n->invalid, "spec.taints[0].effect: Unsupported value: \"Never\"");
    assert_int_equal(n->ntaints, 1);
    assert_string_equal(n->taints[0].key, "b");
    assert_int_equal(n->allocatable.v[SCHED_RES_CPU], 4000);
    sched_node_unref(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requests_containers),
        cmocka_unit_test(test_requests_init_max),
        cmocka_unit_test(test_requests_sidecars_and_overhead),
        cmocka_unit_test(test_requests_sidecar_dominates),
        cmocka_unit_test(test_requests_nonzero_defaults),
        cmocka_unit_test(test_requests_nothing),
        cmocka_unit_test(test_requests_scalar_resources),
        cmocka_unit_test(test_requests_malformed),
        cmocka_unit_test(test_requests_malformed_keeps_the_rest),
        cmocka_unit_test(test_pod_fields),
        cmocka_unit_test(test_pod_ref),
        cmocka_unit_test(test_pod_gates),
        cmocka_unit_test(test_pod_ports),
        cmocka_unit_test(test_toleration_matches),
        cmocka_unit_test(test_tolerations_decoded),
        cmocka_unit_test(test_selector_requirements),
        cmocka_unit_test(test_selector_terms),
        cmocka_unit_test(test_selector_invalid),
        cmocka_unit_test(test_node_selector_and_preferred),
        cmocka_unit_test(test_spread),
        cmocka_unit_test(test_spread_invalid),
        cmocka_unit_test(test_pod_affinity_terms),
        cmocka_unit_test(test_node_decode),
        cmocka_unit_test(test_node_malformed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
