/*
 * Tests for manager/webhook /mutate-pod and /validate-pod (manager-behaviour.md 5.1-5.4): a
 * table of pods, ClusterColocationProfiles, Namespaces and PriorityClasses, each with the pod
 * the API server would store after applying the returned patch (written by hand from the
 * reference, not from the code), or the refusal with upstream's wording. Randomness for the
 * profiles' probability comes from the table, so every case is deterministic.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/base.h"
#include "testutil.h"
#include "webhooktest.h"

/* ---- the objects the lookups return ---- */

static const char *const namespaces[] = {
    "{\"metadata\":{\"name\":\"batch\",\"labels\":{\"colocation\":\"on\"}}}",
    "{\"metadata\":{\"name\":\"web\",\"labels\":{\"team\":\"web\"}}}",
};

static const char *const priority_classes[] = {
    "{\"metadata\":{\"name\":\"koord-batch\"},\"value\":5000,\"preemptionPolicy\":\"Never\"}",
    "{\"metadata\":{\"name\":\"koord-prod\"},\"value\":9000}",
    "{\"metadata\":{\"name\":\"koord-mid\"},\"value\":7000}",
};

struct env {
    cJSON *ns[ARRAY_SIZE(namespaces)];
    cJSON *pc[ARRAY_SIZE(priority_classes)];
    unsigned rand;
};

static const cJSON *find(cJSON *const *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(cJSON_GetStringValue(
                        cJSON_GetObjectItem(cJSON_GetObjectItem(v[i], "metadata"), "name")),
                    name))
            return v[i];
    return NULL;
}

static const cJSON *ns_get(void *ud, const char *name)
{
    struct env *e = ud;
    return find(e->ns, ARRAY_SIZE(e->ns), name);
}

static const cJSON *pc_get(void *ud, const char *name)
{
    struct env *e = ud;
    return find(e->pc, ARRAY_SIZE(e->pc), name);
}

static unsigned fixed_rand(void *ud)
{
    return ((struct env *)ud)->rand;
}

static int setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));

    for (size_t i = 0; i < ARRAY_SIZE(namespaces); i++)
        e->ns[i] = cJSON_Parse(namespaces[i]);
    for (size_t i = 0; i < ARRAY_SIZE(priority_classes); i++)
        e->pc[i] = cJSON_Parse(priority_classes[i]);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;

    for (size_t i = 0; i < ARRAY_SIZE(namespaces); i++)
        cJSON_Delete(e->ns[i]);
    for (size_t i = 0; i < ARRAY_SIZE(priority_classes); i++)
        cJSON_Delete(e->pc[i]);
    free(e);
    return 0;
}

/* The profile every batch case uses: namespaces labelled colocation=on become BE batch pods. */
#define CCP_BATCH                                                                                  \
    "{\"metadata\":{\"name\":\"colocation\"},\"spec\":{\"namespaceSelector\":{\"matchLabels\":"    \
    "{\"colocation\":\"on\"}},\"qosClass\":\"BE\",\"priorityClassName\":\"koord-batch\","          \
    "\"koordinatorPriority\":1111,\"labels\":{\"koordinator.sh/mutated\":\"true\"},"               \
    "\"annotations\":{\"a\":\"1\"},\"schedulerName\":\"koord-scheduler\"}}"

#define POD(ns, labels, resources)                                                                 \
    "{\"metadata\":{\"name\":\"p\",\"namespace\":\"" ns "\"" labels "},\"spec\":{\"containers\":"  \
    "[{\"name\":\"c\",\"image\":\"i\",\"resources\":" resources "}]}}"

#define RES_500M                                                                                   \
    "{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"},\"limits\":{\"cpu\":\"1\",\"memory\":"    \
    "\"1Gi\"}}"

#define BATCH_POD                                                                                  \
    "{\"metadata\":{\"name\":\"p\",\"namespace\":\"batch\",\"labels\":{\"koordinator.sh/"          \
    "mutated\":"                                                                                   \
    "\"true\",\"koordinator.sh/qosClass\":\"BE\",\"koordinator.sh/priority\":\"1111\"},"           \
    "\"annotations\":{\"a\":\"1\",\"node.koordinator.sh/extended-resource-spec\":"                 \
    "\"{\\\"containers\\\":{\\\"c\\\":{\\\"limits\\\":{\\\"kubernetes.io/batch-cpu\\\":"           \
    "\\\"1k\\\",\\\"kubernetes.io/batch-memory\\\":\\\"1Gi\\\"},\\\"requests\\\":{"                \
    "\\\"kubernetes.io/batch-cpu\\\":\\\"500\\\",\\\"kubernetes.io/batch-memory\\\":"              \
    "\\\"1Gi\\\"}}}}\"}},"                                                                         \
    "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{\"requests\":"       \
    "{\"kubernetes.io/batch-cpu\":\"500\",\"kubernetes.io/batch-memory\":\"1Gi\"},\"limits\":"     \
    "{\"kubernetes.io/batch-cpu\":\"1k\",\"kubernetes.io/batch-memory\":\"1Gi\"}}}],"              \
    "\"schedulerName\":\"koord-scheduler\",\"priorityClassName\":\"koord-batch\","                 \
    "\"priority\":5000,\"preemptionPolicy\":\"Never\"}}"

struct mcase {
    const char *name;
    const char *profiles[3];
    const char *op;
    const char *pod;
    unsigned rand;
    const char *want; /* the stored pod; NULL = no patch */
    int code;         /* refusal: result.code, message below */
    const char *message;
    const char *req_ns; /* request.namespace; NULL = "web" */
};

static const struct mcase mutate_cases[] = {
    {"no metadata.namespace: the request's namespace (batch) selects; nothing written back",
     {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"namespaceSelector\":{\"matchLabels\":{"
      "\"colocation\":\"on\"}},\"labels\":{\"l\":\"v\"}}}"},
     "CREATE",
     "{\"metadata\":{\"name\":\"p\"},\"spec\":{}}",
     0,
     "{\"metadata\":{\"name\":\"p\",\"labels\":{\"l\":\"v\"}},\"spec\":{}}",
     0,
     NULL,
     "batch"},
    {"no metadata.namespace, request namespace web: not selected",
     {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"namespaceSelector\":{\"matchLabels\":{"
      "\"colocation\":\"on\"}},\"labels\":{\"l\":\"v\"}}}"},
     "CREATE",
     "{\"metadata\":{\"name\":\"p\"},\"spec\":{}}",
     0,
     NULL,
     0,
     NULL,
     "web"},
    {"batch profile: BE label, batch resources in integer millicores, koord-batch priority",
     {CCP_BATCH},
     "CREATE",
     POD("batch", "", RES_500M),
     0,
     BATCH_POD,
     0,
     NULL},
    {"namespace not selected: nothing",
     {CCP_BATCH},
     "CREATE",
     POD("web", "", RES_500M),
     0,
     NULL,
     0,
     NULL},
    {"namespace not found counts as matched (upstream quirk)",
     {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"namespaceSelector\":{\"matchLabels\":{\"a\":"
      "\"b\"}},\"labels\":{\"l\":\"v\"}}}"},
     "CREATE",
     POD("ghost", "", "{}"),
     0,
     "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ghost\",\"labels\":{\"l\":\"v\"}},\"spec\":"
     "{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{}}]}}",
     0,
     NULL},
    {"a selector that does not parse counts as matched (upstream quirk)",
     {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"selector\":{\"matchExpressions\":[{\"key\":"
      "\"a\",\"operator\":\"Gt\",\"values\":[\"1\"]}]},\"labels\":{\"l\":\"v\"}}}"},
     "CREATE",
     POD("web", "", "{}"),
     0,
     "{\"metadata\":{\"name\":\"p\",\"namespace\":\"web\",\"labels\":{\"l\":\"v\"}},\"spec\":"
     "{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{}}]}}",
     0,
     NULL},
    {"pod selector not matching: nothing",
     {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"a\"}},"
      "\"labels\":{\"l\":\"v\"}}}"},
     "CREATE",
     POD("web", ",\"labels\":{\"app\":\"b\"}", "{}"),
     0,
     NULL,
     0,
     NULL},
    {"probability 50%: random 50 is not above 50, applied",
     {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"probability\":\"50%\",\"labels\":{\"l\":"
      "\"v\"}}}"},
     "CREATE",
     POD("web", "", "{}"),
     50,
     "{\"metadata\":{\"name\":\"p\",\"namespace\":\"web\",\"labels\":{\"l\":\"v\"}},\"spec\":"
     "{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{}}]}}",
     0,
     NULL},
    {"probability 50%: random 51 skips",
     {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"probability\":\"50%\",\"labels\":{\"l\":"
      "\"v\"}}}"},
     "CREATE",
     POD("web", "", "{}"),
     51,
     NULL,
     0,
     NULL},
    {"probability 0 always skips, even at random 0",
     {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"probability\":0,\"labels\":{\"l\":\"v\"}}}"},
     "CREATE",
     POD("web", "", "{}"),
     0,
     NULL,
     0,
     NULL},
    {"probability \"12.9%\" is 12: random 12 applies",
     {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"probability\":\"12.9%\",\"labels\":{\"l\":"
      "\"v\"}}}"},
     "CREATE",
     POD("web", "", "{}"),
     12,
     "{\"metadata\":{\"name\":\"p\",\"namespace\":\"web\",\"labels\":{\"l\":\"v\"}},\"spec\":"
     "{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{}}]}}",
     0,
     NULL},
    {"probability \"12.9%\" is 12: random 13 skips",
     {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"probability\":\"12.9%\",\"labels\":{\"l\":"
      "\"v\"}}}"},
     "CREATE",
     POD("web", "", "{}"),
     13,
     NULL,
     0,
     NULL},
    {"a probability string without % fails the pod (500)",
     {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"probability\":\"50\",\"labels\":{\"l\":"
      "\"v\"}}}"},
     "CREATE",
     POD("web", "", "{}"),
     0,
     NULL,
     500,
     "invalid probability of ClusterColocationProfile: 50"},
    {"an unknown PriorityClass fails the pod (500)",
     {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"priorityClassName\":\"nope\"}}"},
     "CREATE",
     POD("web", "", "{}"),
     0,
     NULL,
     500,
     "priorityclasses.scheduling.k8s.io \"nope\" not found"},
    {"key mappings and suffixes after labels and annotations",
     {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"labels\":{\"app\":\"a\"},"
      "\"labelKeysMapping\":{\"app\":\"app2\",\"missing\":\"m2\"},\"annotationKeysMapping\":"
      "{\"n\":\"n2\"},\"labelSuffixes\":{\"app2\":\"-x\",\"none\":\"-y\"}}}"},
     "CREATE",
     POD("web", ",\"annotations\":{\"n\":\"v\"}", "{}"),
     0,
     "{\"metadata\":{\"name\":\"p\",\"namespace\":\"web\",\"annotations\":{\"n\":\"v\",\"n2\":"
     "\"v\"},\"labels\":{\"app\":\"a\",\"app2\":\"a-x\",\"m2\":\"\"}},\"spec\":{\"containers\":"
     "[{\"name\":\"c\",\"image\":\"i\",\"resources\":{}}]}}",
     0,
     NULL},
    {"profiles apply in name order: the later name wins",
     {"{\"metadata\":{\"name\":\"b\"},\"spec\":{\"labels\":{\"x\":\"b\"}}}",
      "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"labels\":{\"x\":\"a\",\"y\":\"a\"}}}"},
     "CREATE",
     POD("web", "", "{}"),
     0,
     "{\"metadata\":{\"name\":\"p\",\"namespace\":\"web\",\"labels\":{\"x\":\"b\",\"y\":\"a\"}}"
     ","
     "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{}}]}}",
     0,
     NULL},
    {"skip-update-resources: labels but no translation",
     {"{\"metadata\":{\"name\":\"x\",\"annotations\":{\"config.koordinator.sh/"
      "skip-update-resources\":\"\"}},\"spec\":{\"qosClass\":\"BE\"}}"},
     "CREATE",
     POD("web", "", "{\"requests\":{\"cpu\":\"1\"}}"),
     0,
     "{\"metadata\":{\"name\":\"p\",\"namespace\":\"web\",\"labels\":{\"koordinator.sh/"
     "qosClass\":"
     "\"BE\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":"
     "{\"requests\":{\"cpu\":\"1\"}}}]}}",
     0,
     NULL},
    {"limit only: the request is filled from the limit; overhead renamed; init containers too",
     {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"qosClass\":\"BE\"}}"},
     "CREATE",
     "{\"metadata\":{\"name\":\"p\",\"namespace\":\"web\"},\"spec\":{\"initContainers\":[{"
     "\"name\":"
     "\"i\",\"resources\":{\"requests\":{\"cpu\":\"0.1\"}}}],\"containers\":[{\"name\":\"c\","
     "\"resources\":{\"limits\":{\"cpu\":\"2\"}}}],\"overhead\":{\"cpu\":\"250m\",\"memory\":"
     "\"10Mi\"}}}",
     0,
     "{\"metadata\":{\"name\":\"p\",\"namespace\":\"web\",\"labels\":{\"koordinator.sh/"
     "qosClass\":"
     "\"BE\"},\"annotations\":{\"node.koordinator.sh/extended-resource-spec\":"
     "\"{\\\"containers\\\":{\\\"c\\\":{\\\"limits\\\":{\\\"kubernetes.io/batch-cpu\\\":"
     "\\\"2k\\\"},\\\"requests\\\":{\\\"kubernetes.io/batch-cpu\\\":\\\"2k\\\"}}}}\"}},"
     "\"spec\":{\"initContainers\":[{\"name\":\"i\",\"resources\":{\"requests\":{"
     "\"kubernetes.io/batch-cpu\":\"100\"}}}],\"containers\":[{\"name\":\"c\",\"resources\":{"
     "\"limits\":{\"kubernetes.io/batch-cpu\":\"2k\"},\"requests\":{\"kubernetes.io/"
     "batch-cpu\":"
     "\"2k\"}}}],\"overhead\":{\"kubernetes.io/batch-cpu\":\"250\",\"kubernetes.io/"
     "batch-memory\":"
     "\"10Mi\"}}}",
     0,
     NULL},
    {"koord-mid priority class: mid resources",
     {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"priorityClassName\":\"koord-mid\"}}"},
     "CREATE",
     POD("web", "", "{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}"),
     0,
     "{\"metadata\":{\"name\":\"p\",\"namespace\":\"web\"},\"spec\":{\"containers\":[{\"name\":"
     "\"c\",\"image\":\"i\",\"resources\":{\"requests\":{\"kubernetes.io/mid-cpu\":\"1k\","
     "\"kubernetes.io/"
     "mid-memory\":\"1Gi\"}}}],\"priorityClassName\":\"koord-mid\",\"priority\":"
     "7000}}",
     0,
     NULL},
    {"the strategic patch merges tolerations into the pod",
     {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"patch\":{\"spec\":{\"tolerations\":[{\"key\":"
      "\"batch\",\"operator\":\"Exists\"}]},\"metadata\":{\"labels\":{\"p\":\"1\"}}}}}"},
     "CREATE",
     POD("web", "", "{}"),
     0,
     "{\"metadata\":{\"name\":\"p\",\"namespace\":\"web\",\"labels\":{\"p\":\"1\"}},\"spec\":"
     "{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{}}],\"tolerations\":"
     "[{\"key\":\"batch\",\"operator\":\"Exists\"}]}}",
     0,
     NULL},
    {"UPDATE (mutating-update pods) is left alone",
     {CCP_BATCH},
     "UPDATE",
     POD("batch", "", RES_500M),
     0,
     NULL,
     0,
     NULL},
    {"no profile, but batch resources: the extended-resource-spec annotation",
     {NULL},
     "CREATE",
     POD("web", "", "{\"requests\":{\"kubernetes.io/batch-cpu\":\"1k\"}}"),
     0,
     "{\"metadata\":{\"name\":\"p\",\"namespace\":\"web\",\"annotations\":{"
     "\"node.koordinator.sh/extended-resource-spec\":\"{\\\"containers\\\":{\\\"c\\\":{"
     "\\\"requests\\\":{\\\"kubernetes.io/batch-cpu\\\":\\\"1k\\\"}}}}\"}},\"spec\":"
     "{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{\"requests\":{"
     "\"kubernetes.io/batch-cpu\":\"1k\"}}}]}}",
     0,
     NULL},
    {"a stale extended-resource-spec without batch resources becomes {}",
     {NULL},
     "CREATE",
     POD("web", ",\"annotations\":{\"node.koordinator.sh/extended-resource-spec\":\"x\"}", "{}"),
     0,
     "{\"metadata\":{\"name\":\"p\",\"namespace\":\"web\",\"annotations\":{"
     "\"node.koordinator.sh/extended-resource-spec\":\"{}\"}},\"spec\":{\"containers\":[{"
     "\"name\":\"c\",\"image\":\"i\",\"resources\":{}}]}}",
     0,
     NULL},
};

/*
 * Device resource spec (manager-behaviour.md 5.1 step 4): pods no profile selects, with one
 * container asking GPU resources. Outside clang-format, which does not settle on one layout
 * for these literals.
 */
#define GPOD(res) POD("web", "", res)
/* clang-format off */
static const struct mcase device_cases[] = {
    {"gpu 2: gpu-core and gpu-memory-ratio 2, gpu.shared 1 (2 is not over 100)",
     {NULL},
     "CREATE",
     GPOD("{\"requests\":{\"koordinator.sh/gpu\":\"2\"},"
          "\"limits\":{\"koordinator.sh/gpu\":\"2\"}}"),
     0,
     GPOD("{\"requests\":{\"koordinator.sh/gpu-core\":\"2\","
          "\"koordinator.sh/gpu-memory-ratio\":\"2\",\"koordinator.sh/gpu.shared\":\"1\"},"
          "\"limits\":{\"koordinator.sh/gpu-core\":\"2\","
          "\"koordinator.sh/gpu-memory-ratio\":\"2\",\"koordinator.sh/gpu.shared\":\"1\"}}"),
     0,
     NULL,
     NULL},
    {"gpu 200: two whole GPUs shared",
     {NULL},
     "CREATE",
     GPOD("{\"requests\":{\"koordinator.sh/gpu\":\"200\"}}"),
     0,
     GPOD("{\"requests\":{\"koordinator.sh/gpu-core\":\"200\","
          "\"koordinator.sh/gpu-memory-ratio\":\"200\","
          "\"koordinator.sh/gpu.shared\":\"2\"},"
          "\"limits\":{\"koordinator.sh/gpu-core\":\"200\","
          "\"koordinator.sh/gpu-memory-ratio\":\"200\","
          "\"koordinator.sh/gpu.shared\":\"2\"}}"),
     0,
     NULL,
     NULL},
    {"gpu-core 150 alone: not a multiple of 100, gpu.shared 1",
     {NULL},
     "CREATE",
     GPOD("{\"requests\":{\"koordinator.sh/gpu-core\":\"150\"}}"),
     0,
     GPOD("{\"requests\":{\"koordinator.sh/gpu-core\":\"150\","
          "\"koordinator.sh/gpu.shared\":\"1\"},"
          "\"limits\":{\"koordinator.sh/gpu.shared\":\"1\"}}"),
     0,
     NULL,
     NULL},
    {"gpu-memory-ratio decides before gpu-core",
     {NULL},
     "CREATE",
     GPOD("{\"requests\":{\"koordinator.sh/gpu-core\":\"100\","
          "\"koordinator.sh/gpu-memory-ratio\":\"300\"}}"),
     0,
     GPOD("{\"requests\":{\"koordinator.sh/gpu-core\":\"100\","
          "\"koordinator.sh/gpu-memory-ratio\":\"300\","
          "\"koordinator.sh/gpu.shared\":\"3\"},"
          "\"limits\":{\"koordinator.sh/gpu.shared\":\"3\"}}"),
     0,
     NULL,
     NULL},
    {"gpu-memory alone: one shared GPU",
     {NULL},
     "CREATE",
     GPOD("{\"requests\":{\"koordinator.sh/gpu-memory\":\"8Gi\"}}"),
     0,
     GPOD("{\"requests\":{\"koordinator.sh/gpu-memory\":\"8Gi\","
          "\"koordinator.sh/gpu.shared\":\"1\"},"
          "\"limits\":{\"koordinator.sh/gpu.shared\":\"1\"}}"),
     0,
     NULL,
     NULL},
    {"gpu.shared given: kept as written",
     {NULL},
     "CREATE",
     GPOD("{\"requests\":{\"koordinator.sh/gpu-core\":\"200\","
          "\"koordinator.sh/gpu.shared\":\"4\"}}"),
     0,
     NULL,
     0,
     NULL,
     NULL},
};
/* clang-format on */

static void test_mutate(void **state)
{
    struct env *e = *state;
    struct webhook_config cfg = {.rand100 = fixed_rand, .rand_userdata = e};

    webhook_gates_default(&cfg.gates);
    for (size_t i = 0; i < ARRAY_SIZE(mutate_cases) + ARRAY_SIZE(device_cases); i++) {
        const struct mcase *c = i < ARRAY_SIZE(mutate_cases)
                                    ? &mutate_cases[i]
                                    : &device_cases[i - ARRAY_SIZE(mutate_cases)];
        cJSON *profiles[3] = {0};
        size_t n = 0;
        struct wt_out out;
        struct webhook_data d = {
            .namespace_get = ns_get, .priority_class_get = pc_get, .userdata = e};

        for (; n < 3 && c->profiles[n]; n++)
            profiles[n] = J(c->profiles[n]);
        d.profiles = (const cJSON *const *)profiles;
        d.nprofiles = n;
        e->rand = c->rand;
        print_message("case %zu: %s\n", i, c->name);
        wt_run(&cfg, WEBHOOK_PATH_MUTATE_POD,
               wt_review(c->op, "", "pods", "", c->req_ns ? c->req_ns : "web", c->pod, NULL), &d,
               &out);
        if (c->code) {
            assert_false(out.allowed);
            assert_int_equal(out.code, c->code);
            assert_string_equal(out.message, c->message);
        } else {
            assert_true(out.allowed);
            assert_int_equal(out.patched, c->want != NULL);
            if (c->want)
                assert_json_eq_at(out.object, c->want, __LINE__);
        }
        wt_out_release(&out);
        for (size_t k = 0; k < n; k++)
            cJSON_Delete(profiles[k]);
    }
}

/* With ColocationProfileSkipMutatingResources the profile applies but nothing is translated;
 * with PodMutatingWebhook off the path is not served. */
static void test_mutate_gates(void **state)
{
    struct env *e = *state;
    struct webhook_config cfg = {.rand100 = fixed_rand, .rand_userdata = e};
    cJSON *profile = J("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"qosClass\":\"BE\"}}");
    struct webhook_data d = {.profiles = (const cJSON *const *)&profile, .nprofiles = 1};
    struct wt_out out;
    cJSON *resp = NULL, *review;
    struct strbuf err = STRBUF_INIT;

    webhook_gates_default(&cfg.gates);
    cfg.gates.skip_mutating_resources = true;
    wt_run(&cfg, WEBHOOK_PATH_MUTATE_POD,
           wt_review("CREATE", "", "pods", "", "web",
                     POD("web", "", "{\"requests\":{\"cpu\":\"1\"}}"), NULL),
           &d, &out);
    assert_json_eq_at(out.object,
                      "{\"metadata\":{\"name\":\"p\",\"namespace\":\"web\",\"labels\":{"
                      "\"koordinator.sh/qosClass\":\"BE\"}},\"spec\":{\"containers\":[{\"name\":"
                      "\"c\",\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}",
                      __LINE__);
    wt_out_release(&out);
    cfg.gates.pod_mutating = false;
    review = wt_review("CREATE", "", "pods", "", "web", POD("web", "", "{}"), NULL);
    assert_int_equal(webhook_review(&cfg, WEBHOOK_PATH_MUTATE_POD, review, &d, &resp, &err),
                     -ENOENT);
    assert_false(webhook_path_enabled(&cfg, WEBHOOK_PATH_MUTATE_POD, NULL));
    cJSON_Delete(review);
    cJSON_Delete(profile);
    strbuf_release(&err);
}

/* ---- /validate-pod ---- */

struct vcase {
    const char *name;
    const char *op;
    const char *pod, *old;
    const char *message; /* NULL = allowed */
};

#define BE_LABELS ",\"labels\":{\"koordinator.sh/qosClass\":\"BE\"}"
#define BATCH_RES "{\"requests\":{\"kubernetes.io/batch-cpu\":\"1k\"}}"
#define PODP(labels, res, prio)                                                                    \
    "{\"metadata\":{\"name\":\"p\",\"namespace\":\"web\"" labels "},\"spec\":{" prio               \
    "\"containers\":[{\"name\":\"c\",\"resources\":" res "}]}}"

static const struct vcase validate_cases[] = {
    {"a BE batch pod", "CREATE", PODP(BE_LABELS, BATCH_RES, "\"priority\":5000,"), NULL, NULL},
    {"batch resources without the BE label", "CREATE", PODP("", BATCH_RES, ""), NULL,
     "labels.koordinator.sh/qosClass: Required value: must specify koordinator QoS BE with "
     "koordinator colocation resources"},
    {"the reserve-pod annotation", "CREATE",
     PODP(",\"annotations\":{\"scheduling.koordinator.sh/reserve-pod\":\"true\"}", "{}", ""), NULL,
     "annotations.scheduling.koordinator.sh/reserve-pod: Forbidden: cannot set in annotations"},
    {"BE with koord-prod", "CREATE", PODP(BE_LABELS, "{}", "\"priority\":9000,"), NULL,
     "Pod: Forbidden: koordinator.sh/qosClass=BE and priorityClass=koord-prod cannot be used in "
     "combination"},
    {"BE without a priority", "CREATE", PODP(BE_LABELS, "{}", ""), NULL,
     "Pod: Forbidden: koordinator.sh/qosClass=BE and priorityClass= cannot be used in "
     "combination"},
    {"LSR with koord-batch and a fractional cpu: both reported", "CREATE",
     PODP(",\"labels\":{\"koordinator.sh/qosClass\":\"LSR\"}", "{\"requests\":{\"cpu\":\"1500m\"}}",
          "\"priority\":5000,"),
     NULL,
     "[Pod: Forbidden: koordinator.sh/qosClass=LSR and priorityClass=koord-batch cannot be used "
     "in combination, pod.spec.containers[*].resources.requests: Invalid value: \"1500m\": the "
     "requested CPUs of LSR Pod must be integer]"},
    {"LSE without cpu", "CREATE",
     PODP(",\"labels\":{\"koordinator.sh/qosClass\":\"LSE\"}", "{}", "\"priority\":9000,"), NULL,
     "pod.spec.containers[*].resources.requests: Required value: LSR Pod must declare the "
     "requested CPUs"},
    {"LSR prod with 2 cores", "CREATE",
     PODP(",\"labels\":{\"koordinator.sh/qosClass\":\"LSR\"}", "{\"requests\":{\"cpu\":\"2\"}}",
          "\"priority\":9000,"),
     NULL, NULL},
    {"update changing the QoS label", "UPDATE",
     PODP(",\"labels\":{\"koordinator.sh/qosClass\":\"LS\"}", "{}", ""),
     PODP(",\"labels\":{\"koordinator.sh/qosClass\":\"BE\"}", "{}", "\"priority\":5000,"),
     "[labels.koordinator.sh/qosClass: Invalid value: \"LS\": field is immutable, spec.priority: "
     "Invalid value: \"\": field is immutable]"},
    {"update changing the koordinator priority label", "UPDATE",
     PODP(",\"labels\":{\"koordinator.sh/priority\":\"2\"}", "{}", ""),
     PODP(",\"labels\":{\"koordinator.sh/priority\":\"1\"}", "{}", ""),
     "labels.koordinator.sh/priority: Invalid value: \"2\": field is immutable"},
    {"a pod in a parent quota", "CREATE",
     PODP(",\"labels\":{\"quota.scheduling.koordinator.sh/name\":\"parent\"}", "{}", ""), NULL,
     "pod can not be linked to a parentQuotaGroup parent"},
    {"a pod in a leaf quota by its namespace", "CREATE", PODP("", "{}", ""), NULL, NULL},
    {"update changing the preemptible label", "UPDATE",
     PODP(",\"labels\":{\"quota.scheduling.koordinator.sh/preemptible\":\"false\"}", "{}", ""),
     PODP("", "{}", ""),
     "quota.scheduling.koordinator.sh/preemptible label is forbidden to modify"},
};

static void test_validate(void **state)
{
    struct env *e = *state;
    struct webhook_config cfg = {0};
    cJSON *quotas[2] = {
        J("{\"metadata\":{\"name\":\"parent\",\"namespace\":\"q\",\"labels\":{"
          "\"quota.scheduling.koordinator.sh/is-parent\":\"true\"}}}"),
        J("{\"metadata\":{\"name\":\"web\",\"namespace\":\"web\"}}"),
    };
    struct webhook_data d = {.userdata = e,
                             .quotas = {.quotas = (const cJSON *const *)quotas, .n = 2}};

    webhook_gates_default(&cfg.gates);
    for (size_t i = 0; i < ARRAY_SIZE(validate_cases); i++) {
        const struct vcase *c = &validate_cases[i];
        struct wt_out out;

        print_message("case %zu: %s\n", i, c->name);
        wt_run(&cfg, WEBHOOK_PATH_VALIDATE_POD,
               wt_review(c->op, "", "pods", "", "web", c->pod, c->old), &d, &out);
        if (!c->message) {
            assert_true(out.allowed);
        } else {
            assert_false(out.allowed);
            assert_int_equal(out.code, 400);
            assert_string_equal(out.message, c->message);
        }
        assert_false(out.patched);
        wt_out_release(&out);
    }
    /* SupportParentQuotaSubmitPod lets the parent-quota pod in. */
    cfg.gates.support_parent_quota_pods = true;
    {
        struct wt_out out;
        wt_run(&cfg, WEBHOOK_PATH_VALIDATE_POD,
               wt_review("CREATE", "", "pods", "", "web", validate_cases[10].pod, NULL), &d, &out);
        assert_true(out.allowed);
        wt_out_release(&out);
    }
    /* Subresources are not this webhook's business. */
    {
        struct wt_out out;
        wt_run(&cfg, WEBHOOK_PATH_VALIDATE_POD,
               wt_review("CREATE", "", "pods", "binding", "web", validate_cases[1].pod, NULL), &d,
               &out);
        assert_true(out.allowed);
        wt_out_release(&out);
    }
    cJSON_Delete(quotas[0]);
    cJSON_Delete(quotas[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutate),
        cmocka_unit_test(test_mutate_gates),
        cmocka_unit_test(test_validate),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
