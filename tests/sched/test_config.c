/*
 * Tests for src/sched/config/config.c: KubeSchedulerConfiguration defaults, the merging and
 * multiPoint expansion rules of reference scheduler.md 7, each error with its field path, YAML
 * and JSON input, the example files and allocation failures.
 *
 * The plugins' extension points come from their callbacks, which the plugin implementations fill
 * in over time, so most tests run the parser on a fake registry (config.c is included for its
 * seam): the same plugins and args kinds, the points upstream 1.30's plugins implement, and a
 * recording init for InterPodAffinity. The expected lists are worked out by hand from the rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/sched/config/config.c"
#include "testutil.h"

#define PE    (1u << SCHED_PT_PRE_ENQUEUE)
#define QS    (1u << SCHED_PT_QUEUE_SORT)
#define PF    (1u << SCHED_PT_PRE_FILTER)
#define F     (1u << SCHED_PT_FILTER)
#define POSTF (1u << SCHED_PT_POST_FILTER)
#define PS    (1u << SCHED_PT_PRE_SCORE)
#define S     (1u << SCHED_PT_SCORE)
#define R     (1u << SCHED_PT_RESERVE)
#define PERM  (1u << SCHED_PT_PERMIT)
#define PB    (1u << SCHED_PT_PRE_BIND)
#define B     (1u << SCHED_PT_BIND)

/* The extension points of upstream 1.30's plugins (their Go interfaces). */
static const struct {
    const char *name;
    unsigned points;
} upstream_points[] = {
    {"SchedulingGates", PE},
    {"PrioritySort", QS},
    {"NodeUnschedulable", F},
    {"NodeName", F},
    {"TaintToleration", F | PS | S},
    {"NodeAffinity", PF | F | PS | S},
    {"NodePorts", PF | F},
    {"NodeResourcesFit", PF | F | PS | S},
    {"PodTopologySpread", PF | F | PS | S},
    {"InterPodAffinity", PF | F | PS | S},
    {"DefaultPreemption", POSTF},
    {"NodeResourcesBalancedAllocation", PS | S},
    {"DefaultBinder", B},
    /* Koordinator's (their Go interfaces in koordinator pkg/scheduler/plugins; ElasticQuota's
     * PreEnqueue is koord's: it gates pods of a full quota). */
    {"Reservation", PF | F | POSTF | PS | S | R | PB | B},
    {"LoadAwareScheduling", PF | F | S | R},
    {"ScheduleAdmission", PE},
    {"ElasticQuota", PE | PF | POSTF | R},
};

static unsigned fake_mask[SCHED_MAX_PLUGINS];
static struct sched_plugin fake_plugins[SCHED_MAX_PLUGINS];

static struct {
    int calls, frees;
    char path[128];
    char args[256]; /* compact JSON, "null" for none */
} ipa;

static int fake_ipa_init(const cJSON *args, const char *path, struct sched_handle *h,
                         void **ret_self, struct field_errors *errs)
{
    const cJSON *w = args ? cJSON_GetObjectItemCaseSensitive(args, "hardPodAffinityWeight") : NULL;
    struct strbuf sb = STRBUF_INIT;

    (void)h;
    ipa.calls++;
    (void)snprintf(ipa.path, sizeof(ipa.path), "%s", path);
    if (args)
        (void)json_print(args, &sb);
    (void)snprintf(ipa.args, sizeof(ipa.args), "%s", args ? sb.buf : "null");
    strbuf_release(&sb);
    if (w && (w->valuedouble < 0 || w->valuedouble > 100)) {
        char field[160];

        (void)snprintf(field, sizeof(field), "%s.hardPodAffinityWeight", path);
        field_error_add(errs, FIELD_INVALID, field, "101", "not in valid range [0, 100]");
        return -EINVAL;
    }
    *ret_self = xmalloc(16);
    return 0;
}

static void fake_ipa_free(void *self)
{
    ipa.frees++;
    free(self);
}

static unsigned fake_points(int id)
{
    return fake_mask[id];
}

static const struct sched_plugin *fake_plugin(int id)
{
    return &fake_plugins[id];
}

static const struct config_registry fake_registry = {
    .points = fake_points,
    .plugin = fake_plugin,
};

static int id_of(const char *name)
{
    int id = sched_registry_find(name);

    if (id < 0)
        fail_msg("no plugin %s", name);
    return id;
}

static int setup(void **state)
{
    (void)state;
    codec_init();
    assert_int_equal(sched_registry_count(), ARRAY_SIZE(upstream_points));
    memset(fake_mask, 0, sizeof(fake_mask));
    memset(&ipa, 0, sizeof(ipa));
    for (size_t i = 0; i < ARRAY_SIZE(upstream_points); i++) {
        int id = id_of(upstream_points[i].name);
        const struct sched_plugin *real = sched_registry_get(id);

        fake_mask[id] = upstream_points[i].points;
        memset(&fake_plugins[id], 0, sizeof(fake_plugins[id]));
        fake_plugins[id].name = real->name;
        fake_plugins[id].args_kind = real->args_kind;
        fake_plugins[id].default_weight = real->default_weight;
    }
    fake_plugins[id_of("InterPodAffinity")].init = fake_ipa_init;
    fake_plugins[id_of("InterPodAffinity")].free = fake_ipa_free;
    return 0;
}

/* ---- helpers ---- */

static struct sched_config *parse_ok(const char *text)
{
    struct strbuf err = STRBUF_INIT;
    struct sched_config *c = NULL;
    int r = config_parse(text, strlen(text), &fake_registry, &c, &err);

    if (r != 0)
        fail_msg("parse failed (%d):\n%s\ninput:\n%s", r, err.buf, text);
    assert_int_equal(err.len, 0);
    assert_non_null(c);
    strbuf_release(&err);
    return c;
}

/* The error text of a parse that must fail with -EINVAL (caller frees). */
static char *parse_err(const char *text)
{
    struct strbuf err = STRBUF_INIT;
    struct sched_config *c = NULL;
    int r = config_parse(text, strlen(text), &fake_registry, &c, &err);

    if (r != -EINVAL)
        fail_msg("parse returned %d, want -EINVAL; input:\n%s", r, text);
    assert_null(c);
    return strbuf_detach(&err, NULL);
}

/* Asserts the error text is exactly want (lines, each ending in \n); frees got. */
static void assert_errors_at(char *got, const char *want, int line)
{
    if (strcmp(got, want)) {
        print_error("ERROR: line %d: errors differ\n got:\n%s\nwant:\n%s\n", line, got, want);
        free(got);
        fail();
    }
    free(got);
}
#define assert_errors(got, want) assert_errors_at((got), (want), __LINE__)

/* A point's plugins as "A B C", score plugins as "A:3 B:1". */
static void point_str(const struct sched_profile_config *p, enum sched_point pt, char *buf,
                      size_t len)
{
    size_t off = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < p->npoints[pt]; i++) {
        const struct sched_plugin_ref *r = &p->points[pt][i];
        int n;

        if (pt == SCHED_PT_SCORE)
            n = snprintf(buf + off, len - off, "%s%s:%d", i ? " " : "",
                         sched_registry_get(r->id)->name, (int)r->weight);
        else
            n = snprintf(buf + off, len - off, "%s%s", i ? " " : "",
                         sched_registry_get(r->id)->name);
        assert_true(n > 0 && (size_t)n < len - off);
        off += (size_t)n;
        if (pt != SCHED_PT_SCORE)
            assert_int_equal(r->weight, 0);
    }
}

static void assert_point_at(const struct sched_profile_config *p, enum sched_point pt,
                            const char *want, int line)
{
    char got[1024];

    point_str(p, pt, got, sizeof(got));
    if (strcmp(got, want)) {
        print_error("ERROR: line %d: %s differs\n got: %s\nwant: %s\n", line, sched_point_name(pt),
                    got, want);
        fail();
    }
}
#define assert_point(p, pt, want) assert_point_at((p), (pt), (want), __LINE__)

#define HEAD                                                                                       \
    "apiVersion: kubescheduler.config.k8s.io/v1\n"                                                 \
    "kind: KubeSchedulerConfiguration\n"

/* The default profile (upstream default_plugins.go reduced to koord's plugins), expanded. */
#define DEF_PRE_FILTER "NodeAffinity NodePorts NodeResourcesFit PodTopologySpread InterPodAffinity"
#define DEF_FILTER                                                                                 \
    "NodeUnschedulable NodeName TaintToleration NodeAffinity NodePorts NodeResourcesFit "          \
    "PodTopologySpread InterPodAffinity"
#define DEF_PRE_SCORE                                                                              \
    "TaintToleration NodeAffinity NodeResourcesFit PodTopologySpread InterPodAffinity "            \
    "NodeResourcesBalancedAllocation"
#define DEF_SCORE                                                                                  \
    "TaintToleration:3 NodeAffinity:2 NodeResourcesFit:1 PodTopologySpread:2 InterPodAffinity:2 "  \
    "NodeResourcesBalancedAllocation:1"

static void assert_default_profile(const struct sched_profile_config *p)
{
    assert_point(p, SCHED_PT_PRE_ENQUEUE, "SchedulingGates");
    assert_point(p, SCHED_PT_QUEUE_SORT, "PrioritySort");
    assert_point(p, SCHED_PT_PRE_FILTER, DEF_PRE_FILTER);
    assert_point(p, SCHED_PT_FILTER, DEF_FILTER);
    assert_point(p, SCHED_PT_POST_FILTER, "DefaultPreemption");
    assert_point(p, SCHED_PT_PRE_SCORE, DEF_PRE_SCORE);
    assert_point(p, SCHED_PT_SCORE, DEF_SCORE);
    assert_point(p, SCHED_PT_RESERVE, "");
    assert_point(p, SCHED_PT_PERMIT, "");
    assert_point(p, SCHED_PT_PRE_BIND, "");
    assert_point(p, SCHED_PT_BIND, "DefaultBinder");
    assert_point(p, SCHED_PT_POST_BIND, "");
    for (int id = 0; id < SCHED_MAX_PLUGINS; id++)
        assert_null(p->args[id]);
}

/*
 * Without a file, koord scheduler's profile is koord-scheduler's sample profile over the
 * upstream defaults (reference scheduler.md 8.1): the Koordinator plugins after the upstream
 * ones at each point, with the sample's weights (LoadAwareScheduling 1, Reservation 5000);
 * ScheduleAdmission and ElasticQuota gate at PreEnqueue after SchedulingGates; postFilter and
 * bind are "*" disabled then the sample's order, Reservation first.
 */
static void test_koord_default_profile(void **state)
{
    struct sched_config *c = sched_config_default(NULL, NULL);
    const struct sched_profile_config *p = &c->profiles[0];

    (void)state;
    assert_point(p, SCHED_PT_PRE_ENQUEUE, "SchedulingGates ScheduleAdmission ElasticQuota");
    assert_point(p, SCHED_PT_QUEUE_SORT, "PrioritySort");
    assert_point(p, SCHED_PT_PRE_FILTER, DEF_PRE_FILTER " Reservation ElasticQuota");
    assert_point(p, SCHED_PT_FILTER, DEF_FILTER " Reservation LoadAwareScheduling");
    assert_point(p, SCHED_PT_POST_FILTER, "Reservation ElasticQuota DefaultPreemption");
    assert_point(p, SCHED_PT_PRE_SCORE, DEF_PRE_SCORE " Reservation");
    assert_point(p, SCHED_PT_SCORE, DEF_SCORE " LoadAwareScheduling:1 Reservation:5000");
    assert_point(p, SCHED_PT_RESERVE, "Reservation LoadAwareScheduling ElasticQuota");
    assert_point(p, SCHED_PT_PERMIT, "");
    assert_point(p, SCHED_PT_PRE_BIND, "Reservation");
    assert_point(p, SCHED_PT_BIND, "Reservation DefaultBinder");
    assert_point(p, SCHED_PT_POST_BIND, "");
    sched_config_free(c);
}

/* ElasticQuotaArgs through --config with upstream's names: accepted with every field, and each
 * bad field reported under its path. */
static void test_elastic_quota_args(void **state)
{
    static const char good[] =
        HEAD "profiles:\n"
             "- schedulerName: koord-scheduler\n"
             "  plugins:\n"
             "    preEnqueue: {enabled: [{name: ScheduleAdmission}, {name: ElasticQuota}]}\n"
             "    preFilter: {enabled: [{name: ElasticQuota}]}\n"
             "    postFilter: {disabled: [{name: '*'}], enabled: [{name: ElasticQuota}, "
             "{name: DefaultPreemption}]}\n"
             "    reserve: {enabled: [{name: ElasticQuota}]}\n"
             "  pluginConfig:\n"
             "  - name: ElasticQuota\n"
             "    args:\n"
             "      apiVersion: kubescheduler.config.k8s.io/v1\n"
             "      kind: ElasticQuotaArgs\n"
             "      delayEvictTime: 60s\n"
             "      revokePodInterval: 2s\n"
             "      defaultQuotaGroupMax: {cpu: '100', memory: 100Gi}\n"
             "      systemQuotaGroupMax: {cpu: '10', memory: 10Gi}\n"
             "      quotaGroupNamespace: quotas\n"
             "      monitorAllQuotas: false\n"
             "      enableCheckParentQuota: true\n"
             "      enableRuntimeQuota: false\n"
             "      enableMinQuotaScale: false\n"
             "      disableDefaultQuotaPreemption: true\n"
             "      enableQueueHint: true\n"
             "      quotaSnapshotUpdateInterval: 60s\n";
    static const char bad[] = HEAD "profiles:\n"
                                   "- schedulerName: koord-scheduler\n"
                                   "  plugins:\n"
                                   "    preFilter: {enabled: [{name: ElasticQuota}]}\n"
                                   "  pluginConfig:\n"
                                   "  - name: ElasticQuota\n"
                                   "    args:\n"
                                   "      delayEvictTime: soon\n"
                                   "      enableRuntimeQuota: 'yes'\n"
                                   "      defaultQuotaGroupMax: {cpu: lots}\n"
                                   "      hookPlugins: [{key: a}]\n"
                                   "      revokeInterval: 1s\n";
    struct strbuf err = STRBUF_INIT;
    struct sched_config *c = NULL;
    const struct sched_profile_config *p;

    (void)state;
    if (sched_config_parse(good, strlen(good), &c, &err) != 0)
        fail_msg("%s", err.buf);
    p = &c->profiles[0];
    assert_point(p, SCHED_PT_PRE_ENQUEUE, "SchedulingGates ScheduleAdmission ElasticQuota");
    assert_point(p, SCHED_PT_POST_FILTER, "ElasticQuota DefaultPreemption");
    assert_point(p, SCHED_PT_RESERVE, "ElasticQuota");
    sched_config_free(c);
    c = NULL;
    assert_int_equal(sched_config_parse(bad, strlen(bad), &c, &err), -EINVAL);
    assert_null(c);
    assert_non_null(strstr(err.buf, "profiles[0].pluginConfig[0].args.delayEvictTime: Invalid "
                                    "value: \"soon\": must be a duration such as \"120s\""));
    assert_non_null(strstr(err.buf, "profiles[0].pluginConfig[0].args.enableRuntimeQuota: "
                                    "Invalid value: \"yes\": must be a boolean"));
    assert_non_null(strstr(err.buf, "profiles[0].pluginConfig[0].args.defaultQuotaGroupMax[cpu]: "
                                    "Invalid value: \"lots\": must be a non-negative quantity"));
    assert_non_null(strstr(err.buf, "profiles[0].pluginConfig[0].args.hookPlugins: Invalid value"));
    assert_non_null(strstr(err.buf, "profiles[0].pluginConfig[0].args.revokeInterval"));
    strbuf_release(&err);
}

/* ---- names ---- */

static void test_point_names(void **state)
{
    static const char *const names[] = {"preEnqueue", "queueSort", "preFilter", "filter",
                                        "postFilter", "preScore",  "score",     "reserve",
                                        "permit",     "preBind",   "bind",      "postBind"};
    static const char *const labels[] = {"PreEnqueue", "QueueSort", "PreFilter", "Filter",
                                         "PostFilter", "PreScore",  "Score",     "Reserve",
                                         "Permit",     "PreBind",   "Bind",      "PostBind"};

    (void)state;
    assert_int_equal(ARRAY_SIZE(names), SCHED_PT_COUNT);
    for (int p = 0; p < SCHED_PT_COUNT; p++) {
        assert_string_equal(sched_point_name((enum sched_point)p), names[p]);
        assert_string_equal(sched_point_label((enum sched_point)p), labels[p]);
    }
    assert_null(sched_point_name(SCHED_PT_COUNT));
    assert_null(sched_point_label((enum sched_point) - 1));
}

/* ---- defaults ---- */

static void test_default_config(void **state)
{
    static const char *const extra[] = {"second", "third", NULL};
    struct sched_config *c;

    (void)state;
    c = config_default("koord-scheduler", extra, &fake_registry);
    assert_int_equal(c->parallelism, 16);
    assert_int_equal(c->percentage_of_nodes_to_score, 0);
    assert_int_equal(c->pod_initial_backoff_s, 1);
    assert_int_equal(c->pod_max_backoff_s, 10);
    assert_true(c->leader_elect);
    assert_string_equal(c->lease_namespace, "koordinator-system");
    assert_string_equal(c->lease_name, "koord-scheduler");
    assert_int_equal(c->lease_ms, 15000);
    assert_int_equal(c->renew_ms, 10000);
    assert_int_equal(c->retry_ms, 2000);
    assert_true(c->qps == 1000.0);
    assert_int_equal(c->burst, 2000);
    assert_null(c->kubeconfig);
    assert_int_equal(c->nprofiles, 3);
    assert_string_equal(c->profiles[0].scheduler_name, "koord-scheduler");
    assert_string_equal(c->profiles[1].scheduler_name, "second");
    assert_string_equal(c->profiles[2].scheduler_name, "third");
    for (size_t i = 0; i < 3; i++)
        assert_default_profile(&c->profiles[i]);
    assert_ptr_equal(sched_config_profile(c, "third"), &c->profiles[2]);
    assert_null(sched_config_profile(c, "default-scheduler"));
    sched_config_free(c);

    /* The public one, on the real plugins: only what does not depend on their callbacks. */
    c = sched_config_default(NULL, NULL);
    assert_int_equal(c->nprofiles, 1);
    assert_string_equal(c->profiles[0].scheduler_name, "koord-scheduler");
    assert_string_equal(c->lease_namespace, "koordinator-system");
    assert_string_equal(c->lease_name, "koord-scheduler");
    sched_config_free(c);
    /* (Its plugins: test_koord_default_profile.) A file starts from upstream's defaults: no
     * Koordinator plugin unless it names it. */
    {
        struct strbuf err = STRBUF_INIT;
        c = NULL;
        assert_int_equal(sched_config_parse(HEAD, strlen(HEAD), &c, &err), 0);
        for (int pt = 0; pt < SCHED_PT_COUNT; pt++)
            for (size_t i = 0; i < c->profiles[0].npoints[pt]; i++) {
                assert_int_not_equal(c->profiles[0].points[pt][i].id, id_of("LoadAwareScheduling"));
                assert_int_not_equal(c->profiles[0].points[pt][i].id, id_of("Reservation"));
            }
        sched_config_free(c);
        strbuf_release(&err);
    }
    sched_config_free(NULL);
}

static void test_parse_minimal(void **state)
{
    struct sched_config *c;

    (void)state;
    c = parse_ok(HEAD);
    assert_int_equal(c->parallelism, 16);
    assert_int_equal(c->percentage_of_nodes_to_score, 0);
    assert_int_equal(c->pod_initial_backoff_s, 1);
    assert_int_equal(c->pod_max_backoff_s, 10);
    assert_true(c->leader_elect);
    /* A file's lease defaults are upstream's. */
    assert_string_equal(c->lease_namespace, "kube-system");
    assert_string_equal(c->lease_name, "kube-scheduler");
    assert_int_equal(c->lease_ms, 15000);
    assert_int_equal(c->renew_ms, 10000);
    assert_int_equal(c->retry_ms, 2000);
    assert_true(c->qps == 50.0);
    assert_int_equal(c->burst, 100);
    assert_int_equal(c->nprofiles, 1);
    assert_string_equal(c->profiles[0].scheduler_name, "default-scheduler");
    assert_int_equal(c->profiles[0].percentage_of_nodes_to_score, -1);
    assert_default_profile(&c->profiles[0]);
    sched_config_free(c);

    /* An empty profile list is defaulted the same way, and so is a lone unnamed profile. */
    c = parse_ok(HEAD "profiles: []\n");
    assert_int_equal(c->nprofiles, 1);
    assert_string_equal(c->profiles[0].scheduler_name, "default-scheduler");
    sched_config_free(c);
    c = parse_ok(HEAD "profiles:\n- percentageOfNodesToScore: 50\n");
    assert_string_equal(c->profiles[0].scheduler_name, "default-scheduler");
    assert_int_equal(c->profiles[0].percentage_of_nodes_to_score, 50);
    assert_point(&c->profiles[0], SCHED_PT_SCORE, DEF_SCORE);
    sched_config_free(c);
    /* An init without pluginConfig gets NULL args and the profile's path, and is freed. */
    assert_int_equal(ipa.calls, 3);
    assert_int_equal(ipa.frees, 3);
    assert_string_equal(ipa.path, "profiles[0]");
    assert_string_equal(ipa.args, "null");
}

static void test_parse_fields_yaml_and_json(void **state)
{
    static const char yaml[] = HEAD "parallelism: 8\n"
                                    "percentageOfNodesToScore: 40\n"
                                    "podInitialBackoffSeconds: 2\n"
                                    "podMaxBackoffSeconds: 20\n"
                                    "enableProfiling: false\n"
                                    "enableContentionProfiling: false\n"
                                    "delayCacheUntilActive: true\n"
                                    "extenders: []\n"
                                    "leaderElection:\n"
                                    "  leaderElect: false\n"
                                    "  resourceLock: leases\n"
                                    "  resourceNamespace: ns\n"
                                    "  resourceName: name\n"
                                    "  leaseDuration: 1m\n"
                                    "  renewDeadline: 30s\n"
                                    "  retryPeriod: 1.5s\n"
                                    "clientConnection:\n"
                                    "  kubeconfig: /etc/kubernetes/scheduler.conf\n"
                                    "  contentType: application/vnd.kubernetes.protobuf\n"
                                    "  acceptContentTypes: application/json\n"
                                    "  qps: 12.5\n"
                                    "  burst: 30\n"
                                    "profiles:\n"
                                    "- schedulerName: a\n"
                                    "- schedulerName: b\n"
                                    "  percentageOfNodesToScore: 100\n";
    static const char json[] =
        "{\"apiVersion\":\"kubescheduler.config.k8s.io/"
        "v1\",\"kind\":\"KubeSchedulerConfiguration\","
        "\"parallelism\":8,\"percentageOfNodesToScore\":40,\"podInitialBackoffSeconds\":2,"
        "\"podMaxBackoffSeconds\":20,\"enableProfiling\":false,\"enableContentionProfiling\":false,"
        "\"delayCacheUntilActive\":true,\"extenders\":null,"
        "\"leaderElection\":{\"leaderElect\":false,\"resourceLock\":\"leases\","
        "\"resourceNamespace\":\"ns\",\"resourceName\":\"name\",\"leaseDuration\":\"1m\","
        "\"renewDeadline\":\"30s\",\"retryPeriod\":\"1.5s\"},"
        "\"clientConnection\":{\"kubeconfig\":\"/etc/kubernetes/scheduler.conf\","
        "\"contentType\":\"application/vnd.kubernetes.protobuf\","
        "\"acceptContentTypes\":\"application/json\",\"qps\":12.5,\"burst\":30},"
        "\"profiles\":[{\"schedulerName\":\"a\"},"
        "{\"schedulerName\":\"b\",\"percentageOfNodesToScore\":100}]}";
    const char *const inputs[] = {yaml, json};

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(inputs); i++) {
        struct sched_config *c = parse_ok(inputs[i]);

        assert_int_equal(c->parallelism, 8);
        assert_int_equal(c->percentage_of_nodes_to_score, 40);
        assert_int_equal(c->pod_initial_backoff_s, 2);
        assert_int_equal(c->pod_max_backoff_s, 20);
        assert_false(c->leader_elect);
        assert_string_equal(c->lease_namespace, "ns");
        assert_string_equal(c->lease_name, "name");
        assert_int_equal(c->lease_ms, 60000);
        assert_int_equal(c->renew_ms, 30000);
        assert_int_equal(c->retry_ms, 1500);
        assert_string_equal(c->kubeconfig, "/etc/kubernetes/scheduler.conf");
        assert_true(c->qps == 12.5);
        assert_int_equal(c->burst, 30);
        assert_int_equal(c->nprofiles, 2);
        assert_string_equal(c->profiles[0].scheduler_name, "a");
        assert_int_equal(c->profiles[0].percentage_of_nodes_to_score, -1);
        assert_string_equal(c->profiles[1].scheduler_name, "b");
        assert_int_equal(c->profiles[1].percentage_of_nodes_to_score, 100);
        assert_default_profile(&c->profiles[0]);
        assert_default_profile(&c->profiles[1]);
        assert_ptr_equal(sched_config_profile(c, "b"), &c->profiles[1]);
        sched_config_free(c);
    }
}

/* Zero durations, empty strings and zero qps/burst are unset in Go: they take the defaults. */
static void test_zero_values_default(void **state)
{
    struct sched_config *c;

    (void)state;
    c = parse_ok(HEAD "leaderElection:\n"
                      "  leaseDuration: 0s\n"
                      "  renewDeadline: \"0\"\n"
                      "  resourceLock: \"\"\n"
                      "  resourceName: \"\"\n"
                      "clientConnection:\n"
                      "  qps: 0\n"
                      "  burst: 0\n"
                      "  kubeconfig: \"\"\n"
                      "percentageOfNodesToScore: null\n");
    assert_true(c->leader_elect);
    assert_int_equal(c->lease_ms, 15000);
    assert_int_equal(c->renew_ms, 10000);
    assert_string_equal(c->lease_name, "kube-scheduler");
    assert_true(c->qps == 50.0);
    assert_int_equal(c->burst, 100);
    assert_null(c->kubeconfig);
    sched_config_free(c);
}

/* ---- merging (mergePluginSet) and expansion (expandMultiPointPlugins) ---- */

/* "*" at score drops multiPoint there: only the listed ones, the score point's weights (unset
 * is 1, even for TaintToleration whose multiPoint weight is 3); other points keep the defaults. */
static void test_merge_disable_all_then_enable(void **state)
{
    struct sched_config *c;

    (void)state;
    c = parse_ok(HEAD "profiles:\n"
                      "- plugins:\n"
                      "    score:\n"
                      "      disabled:\n"
                      "      - name: \"*\"\n"
                      "      enabled:\n"
                      "      - name: NodeResourcesFit\n"
                      "        weight: 5\n"
                      "      - name: TaintToleration\n");
    assert_point(&c->profiles[0], SCHED_PT_SCORE, "NodeResourcesFit:5 TaintToleration:1");
    assert_point(&c->profiles[0], SCHED_PT_PRE_SCORE, DEF_PRE_SCORE);
    assert_point(&c->profiles[0], SCHED_PT_FILTER, DEF_FILTER);
    sched_config_free(c);
}

/* A default re-listed in multiPoint.enabled keeps its place and takes the new weight. */
static void test_merge_reenable_in_place(void **state)
{
    struct sched_config *c;

    (void)state;
    c = parse_ok(HEAD "profiles:\n"
                      "- plugins:\n"
                      "    multiPoint:\n"
                      "      enabled:\n"
                      "      - name: NodeAffinity\n"
                      "        weight: 7\n"
                      "      - name: TaintToleration\n");
    /* TaintToleration re-listed without a weight: 0, so 1. */
    assert_point(&c->profiles[0], SCHED_PT_SCORE,
                 "TaintToleration:1 NodeAffinity:7 NodeResourcesFit:1 PodTopologySpread:2 "
                 "InterPodAffinity:2 NodeResourcesBalancedAllocation:1");
    assert_point(&c->profiles[0], SCHED_PT_FILTER, DEF_FILTER);
    sched_config_free(c);
}

/* Disabled and enabled again: the default goes, the entry is appended after the defaults. */
static void test_merge_disable_then_append(void **state)
{
    struct sched_config *c;

    (void)state;
    c = parse_ok(HEAD "profiles:\n"
                      "- plugins:\n"
                      "    multiPoint:\n"
                      "      disabled:\n"
                      "      - name: NodeAffinity\n"
                      "      - name: ImageLocality\n"
                      "      - name: VolumeBinding\n"
                      "      enabled:\n"
                      "      - name: NodeAffinity\n"
                      "        weight: 4\n");
    assert_point(&c->profiles[0], SCHED_PT_PRE_FILTER,
                 "NodePorts NodeResourcesFit PodTopologySpread InterPodAffinity NodeAffinity");
    assert_point(&c->profiles[0], SCHED_PT_SCORE,
                 "TaintToleration:3 NodeResourcesFit:1 PodTopologySpread:2 InterPodAffinity:2 "
                 "NodeResourcesBalancedAllocation:1 NodeAffinity:4");
    sched_config_free(c);
}

/*
 * Expansion order at a point: (1) the point's plugins also in multiPoint, in the point's order;
 * (2) multiPoint's other plugins that implement the point; (3) the point's remaining plugins.
 * NodePorts is out of multiPoint, so at filter it is a point-only plugin (3), and it leaves
 * preFilter; NodeName is both (1).
 */
static void test_expand_order(void **state)
{
    struct sched_config *c;

    (void)state;
    c = parse_ok(HEAD "profiles:\n"
                      "- plugins:\n"
                      "    multiPoint:\n"
                      "      disabled:\n"
                      "      - name: NodePorts\n"
                      "    filter:\n"
                      "      enabled:\n"
                      "      - name: NodePorts\n"
                      "      - name: NodeName\n");
    assert_point(&c->profiles[0], SCHED_PT_FILTER,
                 "NodeName NodeUnschedulable TaintToleration NodeAffinity NodeResourcesFit "
                 "PodTopologySpread InterPodAffinity NodePorts");
    assert_point(&c->profiles[0], SCHED_PT_PRE_FILTER,
                 "NodeAffinity NodeResourcesFit PodTopologySpread InterPodAffinity");
    sched_config_free(c);
}

/* A plugin disabled at one point stays at the others. */
static void test_disable_at_one_point(void **state)
{
    struct sched_config *c;

    (void)state;
    c = parse_ok(HEAD "profiles:\n"
                      "- plugins:\n"
                      "    filter:\n"
                      "      disabled:\n"
                      "      - name: TaintToleration\n"
                      "      - name: NodeResourcesFit\n"
                      "    score:\n"
                      "      disabled:\n"
                      "      - name: NodeResourcesBalancedAllocation\n");
    assert_point(&c->profiles[0], SCHED_PT_FILTER,
                 "NodeUnschedulable NodeName NodeAffinity NodePorts PodTopologySpread "
                 "InterPodAffinity");
    assert_point(&c->profiles[0], SCHED_PT_SCORE,
                 "TaintToleration:3 NodeAffinity:2 NodeResourcesFit:1 PodTopologySpread:2 "
                 "InterPodAffinity:2");
    assert_point(&c->profiles[0], SCHED_PT_PRE_SCORE, DEF_PRE_SCORE);
    assert_point(&c->profiles[0], SCHED_PT_PRE_FILTER, DEF_PRE_FILTER);
    sched_config_free(c);
}

/* A weight at the score point beats multiPoint's; the position comes from expansion rule (1). */
static void test_score_weight_precedence(void **state)
{
    struct sched_config *c;

    (void)state;
    c = parse_ok(HEAD "profiles:\n"
                      "- plugins:\n"
                      "    score:\n"
                      "      enabled:\n"
                      "      - name: PodTopologySpread\n"
                      "        weight: 10\n"
                      "      - name: NodeAffinity\n"
                      "        weight: 0\n");
    assert_point(&c->profiles[0], SCHED_PT_SCORE,
                 "PodTopologySpread:10 NodeAffinity:1 TaintToleration:3 NodeResourcesFit:1 "
                 "InterPodAffinity:2 NodeResourcesBalancedAllocation:1");
    sched_config_free(c);
}

/* The points a plugin lands on follow what it implements (here a fake NodePorts with Reserve and
 * Permit, and a DefaultBinder that also scores). */
static void test_expand_follows_implemented_points(void **state)
{
    struct sched_config *c;

    (void)state;
    fake_mask[id_of("NodePorts")] |= R | PERM;
    fake_mask[id_of("DefaultBinder")] |= S;
    c = parse_ok(HEAD);
    assert_point(&c->profiles[0], SCHED_PT_RESERVE, "NodePorts");
    assert_point(&c->profiles[0], SCHED_PT_PERMIT, "NodePorts");
    assert_point(&c->profiles[0], SCHED_PT_SCORE, DEF_SCORE " DefaultBinder:1");
    assert_point(&c->profiles[0], SCHED_PT_PRE_BIND, "");
    sched_config_free(c);
}

/* expand_profile itself, on hand-made sets and its own points table. */
static unsigned two_points(int id)
{
    return id == id_of("NodeName") ? F | S : id == id_of("NodePorts") ? F | B : 0;
}

static void test_expand_direct(void **state)
{
    struct pctx c = {.reg = &fake_registry};
    struct sched_profile_config prof = {0};
    struct pset sets[NSETS];
    int nn = id_of("NodeName"), np = id_of("NodePorts"), tt = id_of("TaintToleration");

    (void)state;
    field_errors_init(&c.errs);
    memset(sets, 0, sizeof(sets));
    pset_push(&sets[SET_MULTI], (struct pentry){.id = tt, .src = 0});
    pset_push(&sets[SET_MULTI],
              (struct pentry){.id = nn, .src = 1, .has_weight = true, .weight = 6});
    pset_push(&sets[SET_MULTI], (struct pentry){.id = np, .src = 2});
    pset_push(&sets[SCHED_PT_FILTER], (struct pentry){.id = np, .src = 0});
    sets[SCHED_PT_BIND].all_disabled = true;
    expand_profile(&c, sets, two_points, "profiles[0]", &prof);
    assert_int_equal(c.errs.n, 0);
    /* TaintToleration implements nothing here; bind has "*" disabled. */
    assert_point(&prof, SCHED_PT_FILTER, "NodePorts NodeName");
    assert_point(&prof, SCHED_PT_SCORE, "NodeName:6");
    assert_point(&prof, SCHED_PT_BIND, "");
    for (int p = 0; p < SCHED_PT_COUNT; p++)
        free(prof.points[p]);
    psets_release(sets);
    field_errors_release(&c.errs);
}

/* Koordinator's way: "*" then one plugin at queueSort, postFilter and bind. */
static void test_replace_single_points(void **state)
{
    struct sched_config *c;

    (void)state;
    c = parse_ok(HEAD "profiles:\n"
                      "- schedulerName: koord-scheduler\n"
                      "  plugins:\n"
                      "    queueSort: {disabled: [{name: '*'}], enabled: [{name: PrioritySort}]}\n"
                      "    postFilter: {disabled: [{name: '*'}]}\n"
                      "    bind: {disabled: [{name: '*'}], enabled: [{name: DefaultBinder}]}\n");
    assert_point(&c->profiles[0], SCHED_PT_QUEUE_SORT, "PrioritySort");
    assert_point(&c->profiles[0], SCHED_PT_POST_FILTER, "");
    assert_point(&c->profiles[0], SCHED_PT_BIND, "DefaultBinder");
    assert_point(&c->profiles[0], SCHED_PT_FILTER, DEF_FILTER);
    sched_config_free(c);
}

/* ---- args ---- */

static void test_args_storage(void **state)
{
    struct sched_config *c;
    int fit = id_of("NodeResourcesFit");

    (void)state;
    c = parse_ok(HEAD "profiles:\n"
                      "- pluginConfig:\n"
                      "  - name: NodeResourcesFit\n"
                      "    args:\n"
                      "      apiVersion: kubescheduler.config.k8s.io/v1\n"
                      "      kind: NodeResourcesFitArgs\n"
                      "      scoringStrategy: {type: MostAllocated}\n"
                      "  - name: NodeName\n"
                      "    args: {whatever: 1}\n"
                      "  - name: VolumeBinding\n"
                      "    args: {bindTimeoutSeconds: 600}\n"
                      "  - name: MyOutOfTreePlugin\n"
                      "    args: {x: y}\n"
                      "  - name: InterPodAffinity\n"
                      "    args: {hardPodAffinityWeight: 5}\n"
                      "  - name: DefaultPreemption\n");
    assert_json_eq(c->profiles[0].args[fit],
                   "{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\",\"kind\":"
                   "\"NodeResourcesFitArgs\",\"scoringStrategy\":{\"type\":\"MostAllocated\"}}");
    assert_json_eq(c->profiles[0].args[id_of("InterPodAffinity")], "{\"hardPodAffinityWeight\":5}");
    /* NodeName takes no args; DefaultPreemption was given none. */
    assert_null(c->profiles[0].args[id_of("NodeName")]);
    assert_null(c->profiles[0].args[id_of("DefaultPreemption")]);
    assert_int_equal(ipa.calls, 1);
    assert_int_equal(ipa.frees, 1);
    assert_string_equal(ipa.path, "profiles[0].pluginConfig[4].args");
    assert_string_equal(ipa.args, "{\"hardPodAffinityWeight\":5}");
    sched_config_free(c);
}

/* ---- errors, each with its path ---- */

static void test_errors_document(void **state)
{
    (void)state;
    assert_errors(parse_err("kind: KubeSchedulerConfiguration\n"), "apiVersion: Required value\n");
    assert_errors(parse_err("apiVersion: kubescheduler.config.k8s.io/v1beta3\n"
                            "kind: KubeSchedulerConfiguration\n"
                            "parallelism: 0\n"),
                  "apiVersion: Unsupported value: \"kubescheduler.config.k8s.io/v1beta3\": "
                  "supported values: \"kubescheduler.config.k8s.io/v1\"\n");
    assert_errors(parse_err("apiVersion: kubescheduler.config.k8s.io/v1\nkind: Policy\n"),
                  "kind: Unsupported value: \"Policy\": supported values: "
                  "\"KubeSchedulerConfiguration\"\n");
    assert_errors(parse_err("{}"), "apiVersion: Required value\nkind: Required value\n");
    assert_errors(parse_err("[1]"), "KubeSchedulerConfiguration must be an object\n");
    assert_errors(parse_err(""), "expected one KubeSchedulerConfiguration document, got 0\n");
    assert_errors(parse_err(HEAD "---\n" HEAD),
                  "expected one KubeSchedulerConfiguration document, got 2\n");
    {
        char *e = parse_err("apiVersion: [\n");

        assert_true(!strncmp(e, "line ", 5));
        free(e);
    }
}

static void test_errors_top_level(void **state)
{
    (void)state;
    assert_errors(parse_err(HEAD "foo: 1\nparallelism: 0\n"),
                  "foo: unknown field \"foo\"\n"
                  "parallelism: Invalid value: 0: should be an integer value greater than zero\n");
    assert_errors(parse_err(HEAD "Parallelism: 4\n"),
                  "Parallelism: unknown field \"Parallelism\"\n");
    assert_errors(parse_err(HEAD "parallelism: \"4\"\n"),
                  "parallelism: Invalid value: \"4\": must be an integer\n");
    assert_errors(parse_err(HEAD "parallelism: 1.5\n"),
                  "parallelism: Invalid value: 1.5: must be an integer in the range of its type\n");
    assert_errors(parse_err(HEAD "percentageOfNodesToScore: 101\n"),
                  "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]\n");
    assert_errors(parse_err(HEAD "podInitialBackoffSeconds: 0\n"),
                  "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0\n");
    assert_errors(parse_err(HEAD "podMaxBackoffSeconds: 0\n"),
                  "podMaxBackoffSeconds: Invalid value: 0: must be greater than or equal to "
                  "PodInitialBackoffSeconds\n");
    assert_errors(parse_err(HEAD "podInitialBackoffSeconds: 11\n"),
                  "podMaxBackoffSeconds: Invalid value: 10: must be greater than or equal to "
                  "PodInitialBackoffSeconds\n");
    assert_errors(parse_err(HEAD "enableProfiling: 1\n"),
                  "enableProfiling: Invalid value: 1: must be a boolean\n");
    assert_errors(parse_err(HEAD "extenders:\n- urlPrefix: http://127.0.0.1:8888\n"),
                  "extenders: extenders are not supported by koord scheduler\n");
    assert_errors(parse_err(HEAD "profiles: {}\n"),
                  "profiles: Invalid value: {}: must be a list\n");
}

static void test_errors_leader_election_and_client(void **state)
{
    (void)state;
    assert_errors(parse_err(HEAD "leaderElection:\n  resourceLock: endpoints\n  foo: x\n"),
                  "leaderElection.foo: unknown field \"leaderElection.foo\"\n"
                  "leaderElection.resourceLock: Invalid value: \"endpoints\": resourceLock value "
                  "must be \"leases\"\n");
    assert_errors(parse_err(HEAD "leaderElection:\n  leaseDuration: 5s\n"),
                  "leaderElection.leaseDuration: Invalid value: 10s: LeaseDuration must be greater "
                  "than RenewDeadline\n");
    assert_errors(parse_err(HEAD "leaderElection:\n  retryPeriod: -1s\n"),
                  "leaderElection.retryPeriod: Invalid value: -1s: must be greater than zero\n");
    assert_errors(parse_err(HEAD "leaderElection:\n  leaseDuration: \"15\"\n"),
                  "leaderElection.leaseDuration: Invalid value: \"15\": must be a duration such "
                  "as \"15s\"\n");
    /* Without leader election none of it is checked. */
    sched_config_free(parse_ok(HEAD "leaderElection:\n  leaderElect: false\n"
                                    "  resourceLock: endpoints\n  leaseDuration: 5s\n"));
    assert_errors(parse_err(HEAD "clientConnection:\n  burst: -1\n  qps: fast\n  bar: 1\n"),
                  "clientConnection.bar: unknown field \"clientConnection.bar\"\n"
                  "clientConnection.qps: Invalid value: \"fast\": must be a number\n"
                  "clientConnection.burst: Invalid value: -1: must be non-negative\n");
}

static void test_errors_profiles(void **state)
{
    (void)state;
    assert_errors(parse_err(HEAD "profiles:\n- percentageOfNodesToScore: 1\n"
                                 "- schedulerName: \"\"\n"),
                  "profiles[0].schedulerName: Required value\n"
                  "profiles[1].schedulerName: Required value\n");
    assert_errors(parse_err(HEAD "profiles:\n- schedulerName: a\n- schedulerName: b\n"
                                 "- schedulerName: a\n- schedulerName: a\n"),
                  "profiles[2].schedulerName: Duplicate value: profiles[0].schedulerName\n"
                  "profiles[3].schedulerName: Duplicate value: profiles[2].schedulerName\n");
    assert_errors(parse_err(HEAD "profiles:\n- percentageOfNodesToScore: -1\n  plugin: {}\n"),
                  "profiles[0].plugin: unknown field \"profiles[0].plugin\"\n"
                  "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range "
                  "[0-100]\n");
    assert_errors(parse_err(HEAD "profiles:\n- plugins:\n    scores: {}\n"
                                 "    filter:\n      enabled:\n      - name: NodeName\n"
                                 "        wieght: 1\n"),
                  "profiles[0].plugins.scores: unknown field \"profiles[0].plugins.scores\"\n"
                  "profiles[0].plugins.filter.enabled[0].wieght: unknown field "
                  "\"profiles[0].plugins.filter.enabled[0].wieght\"\n");
}

static void test_errors_plugin_names(void **state)
{
    (void)state;
    /* Upstream-only plugins may be disabled (nothing to do), not enabled. */
    assert_errors(parse_err(HEAD "profiles:\n- plugins:\n"
                                 "    score:\n      enabled:\n      - name: ImageLocality\n"
                                 "        weight: 1\n"
                                 "      disabled:\n      - name: ImageLocality\n"
                                 "    filter:\n      enabled:\n      - name: NodeName\n"
                                 "      - name: Foo\n      - {weight: 1}\n"
                                 "    multiPoint:\n      enabled:\n      - name: VolumeBinding\n"),
                  "profiles[0].plugins.filter.enabled[1].name: Invalid value: \"Foo\": unknown "
                  "plugin\n"
                  "profiles[0].plugins.filter.enabled[2].name: Required value\n"
                  "profiles[0].plugins.score.enabled[0]: plugin \"ImageLocality\" is not "
                  "supported by koord scheduler\n"
                  "profiles[0].plugins.multiPoint.enabled[0]: plugin \"VolumeBinding\" is not "
                  "supported by koord scheduler\n");
    assert_errors(parse_err(HEAD "profiles:\n- plugins:\n    filter:\n      enabled:\n"
                                 "      - name: '*'\n"),
                  "profiles[0].plugins.filter.enabled[0].name: Invalid value: \"*\": unknown "
                  "plugin\n");
    assert_errors(parse_err(HEAD "profiles:\n- plugins:\n    filter:\n      enabled: NodeName\n"),
                  "profiles[0].plugins.filter.enabled: Invalid value: \"NodeName\": must be a "
                  "list\n");
    assert_errors(parse_err(HEAD "profiles:\n- plugins:\n    score:\n      enabled:\n"
                                 "      - name: NodeAffinity\n        weight: 3000000000\n"),
                  "profiles[0].plugins.score.enabled[0].weight: Invalid value: 3000000000: must "
                  "be an integer in the range of its type\n");
    /* Disabled names are not checked, as upstream. */
    sched_config_free(parse_ok(HEAD "profiles:\n- plugins:\n    filter:\n      disabled:\n"
                                    "      - name: Foo\n      - name: NodeVolumeLimits\n"));
}

static void test_errors_framework(void **state)
{
    (void)state;
    assert_errors(parse_err(HEAD "profiles:\n- plugins:\n    filter:\n      enabled:\n"
                                 "      - name: DefaultBinder\n      - name: NodeName\n"
                                 "      - name: NodeName\n"),
                  "profiles[0].plugins.filter.enabled[0]: plugin \"DefaultBinder\" does not "
                  "extend FilterPlugin plugin\n"
                  "profiles[0].plugins.filter.enabled[2]: plugin \"NodeName\" already registered "
                  "as \"FilterPlugin\"\n");
    /* Twice in multiPoint: the default is replaced by the last entry, the first is appended. */
    assert_errors(parse_err(HEAD "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n"
                                 "      - name: NodePorts\n      - name: NodePorts\n"),
                  "profiles[0].plugins.multiPoint.enabled[0]: plugin \"NodePorts\" already "
                  "registered as \"PreFilterPlugin\"\n"
                  "profiles[0].plugins.multiPoint.enabled[0]: plugin \"NodePorts\" already "
                  "registered as \"FilterPlugin\"\n");
    assert_errors(parse_err(HEAD "profiles:\n- plugins:\n"
                                 "    queueSort: {disabled: [{name: '*'}]}\n"
                                 "    bind: {disabled: [{name: DefaultBinder}]}\n"),
                  "profiles[0].plugins.queueSort: only one queue sort plugin required for "
                  "profile with scheduler name \"default-scheduler\", but got 0\n"
                  "profiles[0].plugins.bind: at least one bind plugin is needed for profile with "
                  "scheduler name \"default-scheduler\"\n");
    /* A second QueueSort plugin (NodeName pretends to be one). */
    fake_mask[id_of("NodeName")] |= QS;
    assert_errors(parse_err(HEAD "profiles:\n- schedulerName: x\n"),
                  "profiles[0].plugins.queueSort: only one queue sort plugin required for "
                  "profile with scheduler name \"x\", but got 2\n");
    assert_errors(parse_err(HEAD "profiles:\n"
                                 "- schedulerName: a\n  plugins:\n    queueSort:\n"
                                 "      disabled: [{name: '*'}]\n"
                                 "      enabled: [{name: PrioritySort}]\n"
                                 "- schedulerName: b\n  plugins:\n    queueSort:\n"
                                 "      disabled: [{name: '*'}]\n"
                                 "      enabled: [{name: NodeName}]\n"),
                  "profiles[1].plugins.queueSort: Invalid value: \"NodeName\": must be the same "
                  "for all profiles\n");
}

static void test_errors_queue_sort_args(void **state)
{
    (void)state;
    fake_plugins[id_of("PrioritySort")].args_kind = "PrioritySortArgs";
    assert_errors(parse_err(HEAD "profiles:\n- schedulerName: a\n"
                                 "- schedulerName: b\n  pluginConfig:\n"
                                 "  - name: PrioritySort\n    args: {a: 1}\n"),
                  "profiles[1].pluginConfig[0].args: Invalid value: {\"a\":1}: must be the same "
                  "for all profiles\n");
    sched_config_free(parse_ok(HEAD "profiles:\n- schedulerName: a\n  pluginConfig:\n"
                                    "  - name: PrioritySort\n    args: {a: 1}\n"
                                    "- schedulerName: b\n  pluginConfig:\n"
                                    "  - name: PrioritySort\n    args: {a: 1}\n"));
}

static void test_errors_plugin_config(void **state)
{
    (void)state;
    assert_errors(parse_err(HEAD "profiles:\n- pluginConfig:\n"
                                 "  - name: NodeResourcesFit\n"
                                 "  - name: NodeResourcesFit\n    args: {}\n"
                                 "  - args: {}\n"
                                 "  - name: NodeAffinity\n    args: [1]\n    arg: {}\n"
                                 "  - name: PodTopologySpread\n"
                                 "    args: {kind: NodeAffinityArgs}\n"
                                 "  - name: DefaultPreemption\n"
                                 "    args:\n"
                                 "      apiVersion: kubescheduler.config.k8s.io/v1beta3\n"
                                 "      kind: DefaultPreemptionArgs\n"),
                  "profiles[0].pluginConfig[1]: Duplicate value: \"NodeResourcesFit\"\n"
                  "profiles[0].pluginConfig[2].name: Required value\n"
                  "profiles[0].pluginConfig[3].arg: unknown field "
                  "\"profiles[0].pluginConfig[3].arg\"\n"
                  "profiles[0].pluginConfig[3].args: Invalid value: [1]: must be an object\n"
                  "profiles[0].pluginConfig[4].args: args for plugin PodTopologySpread were not "
                  "of type PodTopologySpreadArgs.kubescheduler.config.k8s.io, got "
                  "NodeAffinityArgs.kubescheduler.config.k8s.io\n"
                  "profiles[0].pluginConfig[5].args.apiVersion: Unsupported value: "
                  "\"kubescheduler.config.k8s.io/v1beta3\": supported values: "
                  "\"kubescheduler.config.k8s.io/v1\"\n");
}

/* Bad args are reported by the plugin's init under the pluginConfig path, also for a plugin
 * the profile does not enable (validation.go validates every pluginConfig entry). */
static void test_errors_plugin_init(void **state)
{
    static const char want[] = "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid "
                               "value: 101: not in valid range [0, 100]\n";

    (void)state;
    assert_errors(parse_err(HEAD "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n"
                                 "    args: {hardPodAffinityWeight: 101}\n"),
                  want);
    assert_errors(parse_err(HEAD "profiles:\n- plugins:\n    multiPoint:\n"
                                 "      disabled: [{name: InterPodAffinity}]\n"
                                 "  pluginConfig:\n  - name: InterPodAffinity\n"
                                 "    args: {hardPodAffinityWeight: 101}\n"),
                  want);
    assert_int_equal(ipa.frees, 0);
}

/* Every problem is reported at once. */
static void test_errors_collected(void **state)
{
    (void)state;
    assert_errors(parse_err(HEAD "parallelism: -1\n"
                                 "extenders: [{}]\n"
                                 "profiles:\n- schedulerName: a\n  plugins:\n"
                                 "    score: {enabled: [{name: Bar}]}\n"
                                 "- schedulerName: a\n"),
                  "parallelism: Invalid value: -1: should be an integer value greater than zero\n"
                  "extenders: extenders are not supported by koord scheduler\n"
                  "profiles[0].plugins.score.enabled[0].name: Invalid value: \"Bar\": unknown "
                  "plugin\n"
                  "profiles[1].schedulerName: Duplicate value: profiles[0].schedulerName\n");
}

/* ---- the example files ---- */

static void read_example(const char *name, struct strbuf *out)
{
    const char *dir = getenv("KOORD_SOURCE_DIR");
    struct strbuf path = STRBUF_INIT;

    strbuf_addf(&path, "%s/examples/scheduler/%s", dir && *dir ? dir : KOORD_SOURCE_DIR, name);
    if (codec_read_file(path.buf, 1 << 20, out) != 0)
        fail_msg("cannot read %s", path.buf);
    strbuf_release(&path);
}

static void test_examples(void **state)
{
    struct strbuf text = STRBUF_INIT;
    struct sched_config *c;
    int fit = id_of("NodeResourcesFit");

    (void)state;
    read_example("koord-scheduler-config.yaml", &text);
    c = parse_ok(text.buf);
    assert_string_equal(c->lease_namespace, "koordinator-system");
    assert_string_equal(c->lease_name, "koord-scheduler");
    assert_int_equal(c->nprofiles, 1);
    assert_string_equal(c->profiles[0].scheduler_name, "koord-scheduler");
    assert_point(&c->profiles[0], SCHED_PT_PRE_ENQUEUE,
                 "SchedulingGates ScheduleAdmission ElasticQuota");
    assert_point(&c->profiles[0], SCHED_PT_QUEUE_SORT, "PrioritySort");
    assert_point(&c->profiles[0], SCHED_PT_PRE_FILTER, DEF_PRE_FILTER " Reservation ElasticQuota");
    assert_point(&c->profiles[0], SCHED_PT_FILTER, DEF_FILTER " Reservation LoadAwareScheduling");
    assert_point(&c->profiles[0], SCHED_PT_POST_FILTER,
                 "Reservation ElasticQuota DefaultPreemption");
    assert_point(&c->profiles[0], SCHED_PT_PRE_SCORE, DEF_PRE_SCORE " Reservation");
    assert_point(&c->profiles[0], SCHED_PT_SCORE,
                 DEF_SCORE " LoadAwareScheduling:1 Reservation:5000");
    assert_point(&c->profiles[0], SCHED_PT_RESERVE, "Reservation LoadAwareScheduling ElasticQuota");
    assert_point(&c->profiles[0], SCHED_PT_PRE_BIND, "Reservation");
    assert_point(&c->profiles[0], SCHED_PT_BIND, "Reservation DefaultBinder");
    assert_json_eq(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(c->profiles[0].args[fit], "scoringStrategy"),
            "resources"),
        "[{\"name\":\"cpu\",\"weight\":1},{\"name\":\"memory\",\"weight\":1},"
        "{\"name\":\"kubernetes.io/batch-cpu\",\"weight\":1},"
        "{\"name\":\"kubernetes.io/batch-memory\",\"weight\":1}]");
    sched_config_free(c);

    strbuf_reset(&text);
    read_example("default-config.yaml", &text);
    c = parse_ok(text.buf);
    assert_string_equal(c->lease_namespace, "kube-system");
    assert_string_equal(c->lease_name, "kube-scheduler");
    assert_string_equal(c->profiles[0].scheduler_name, "default-scheduler");
    assert_point(&c->profiles[0], SCHED_PT_SCORE, DEF_SCORE);
    assert_json_eq(c->profiles[0].args[id_of("InterPodAffinity")],
                   "{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\",\"kind\":"
                   "\"InterPodAffinityArgs\",\"hardPodAffinityWeight\":1}");
    sched_config_free(c);
    strbuf_release(&text);
}

/* Whether the real plugin has any callback yet (the skeletons have none). */
static bool is_implemented(const struct sched_plugin *p)
{
    return plugin_points(p) != 0;
}

/*
 * The example files' args are accepted by the real plugins' init (those written so far), and the
 * instances are freed: upstream's points, real plugins.
 */
static const struct config_registry real_init_registry = {
    .points = fake_points,
    .plugin = sched_registry_get,
};

static void test_examples_real_args(void **state)
{
    const char *const files[] = {"koord-scheduler-config.yaml", "default-config.yaml"};
    struct strbuf text = STRBUF_INIT;

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
        struct strbuf err = STRBUF_INIT;
        struct sched_config *c = NULL;

        strbuf_reset(&text);
        read_example(files[i], &text);
        if (config_parse(text.buf, text.len, &real_init_registry, &c, &err) != 0)
            fail_msg("%s:\n%s", files[i], err.buf);
        sched_config_free(c);
        strbuf_release(&err);
    }
    strbuf_release(&text);

    /* LoadAwareScheduling's args under upstream's plugin name and kind; bad ones by path. */
    {
        static const char bad[] =
            HEAD "profiles:\n- pluginConfig:\n"
                 "  - name: LoadAwareScheduling\n"
                 "    args: {kind: LoadAwareSchedulingArgs, usageThresholds: {cpu: 120},\n"
                 "           aggregated: {usageAggregationType: p42}}\n";
        static const char want[] =
            "profiles[0].pluginConfig[0].args.usageThresholds.cpu: Invalid value: 120: "
            "threshold of cpu must be in [0, 100]\n"
            "profiles[0].pluginConfig[0].args.aggregated.usageAggregationType: Unsupported "
            "value: \"p42\": supported values: \"avg\", \"p50\", \"p90\", \"p95\", \"p99\"\n";
        struct strbuf err = STRBUF_INIT;
        struct sched_config *c = NULL;

        assert_int_equal(config_parse(bad, strlen(bad), &real_init_registry, &c, &err), -EINVAL);
        assert_string_equal(err.buf, want);
        strbuf_release(&err);
    }

    /* A real plugin's own errors come under the pluginConfig entry's path. */
    if (sched_registry_get(id_of("NodeResourcesFit"))->init) {
        static const char bad[] = HEAD "profiles:\n- pluginConfig:\n"
                                       "  - name: NodeResourcesFit\n"
                                       "    args: {scoringStrategy: {type: Foo}}\n";
        static const char want[] = "profiles[0].pluginConfig[0].args.scoringStrategy.type: ";
        struct strbuf err = STRBUF_INIT;
        struct sched_config *c = NULL;

        assert_int_equal(config_parse(bad, strlen(bad), &real_init_registry, &c, &err), -EINVAL);
        if (strncmp(err.buf, want, strlen(want)))
            fail_msg("got:\n%s", err.buf);
        strbuf_release(&err);
    }
}

/*
 * The real plugins must land where upstream's do. A C plugin may leave out PreFilter, PreScore or
 * Reserve when it does that work elsewhere (noted, not an error), but it implements upstream's
 * other points exactly, and no point upstream's lacks: expansion follows these. Then the example
 * files parse with the real registry. The parsing part is skipped while any plugin is a skeleton.
 */
static void test_real_registry(void **state)
{
    const unsigned optional = PF | PS | R;
    struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
    const char *const files[] = {"koord-scheduler-config.yaml", "default-config.yaml"};
    struct sched_config *c;
    size_t skeletons = 0;

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(upstream_points); i++) {
        const struct sched_plugin *p = sched_registry_get(id_of(upstream_points[i].name));
        unsigned got = plugin_points(p), want = upstream_points[i].points;

        if (!is_implemented(p)) {
            skeletons++;
            continue;
        }
        if ((got & ~want) || ((got ^ want) & ~optional))
            fail_msg("%s implements points %#x, upstream %#x", p->name, got, want);
        for (int pt = 0; pt < SCHED_PT_COUNT; pt++)
            if ((want & ~got) & (1u << pt))
                print_message("note: %s has no %s (upstream's has; a configuration naming it "
                              "there is refused)\n",
                              p->name, sched_point_label((enum sched_point)pt));
    }
    if (skeletons) {
        print_message("%zu plugins are still skeletons: parsing with them skipped\n", skeletons);
        skip();
    }
    for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
        strbuf_reset(&text);
        read_example(files[i], &text);
        if (sched_config_parse(text.buf, text.len, &c, &err) != 0)
            fail_msg("%s:\n%s", files[i], err.buf);
        /* The koord sample adds ScheduleAdmission and ElasticQuota. */
        assert_point(&c->profiles[0], SCHED_PT_PRE_ENQUEUE,
                     i ? "SchedulingGates" : "SchedulingGates ScheduleAdmission ElasticQuota");
        assert_point(&c->profiles[0], SCHED_PT_QUEUE_SORT, "PrioritySort");
        /* The first is koord-scheduler's sample, with Koordinator's plugins. */
        assert_point(&c->profiles[0], SCHED_PT_FILTER,
                     i == 0 ? DEF_FILTER " Reservation LoadAwareScheduling" : DEF_FILTER);
        assert_point(&c->profiles[0], SCHED_PT_POST_FILTER,
                     i == 0 ? "Reservation ElasticQuota DefaultPreemption" : "DefaultPreemption");
        assert_point(&c->profiles[0], SCHED_PT_SCORE,
                     i == 0 ? DEF_SCORE " LoadAwareScheduling:1 Reservation:5000" : DEF_SCORE);
        assert_point(&c->profiles[0], SCHED_PT_BIND,
                     i == 0 ? "Reservation DefaultBinder" : "DefaultBinder");
        sched_config_free(c);
    }
    strbuf_release(&text);
    strbuf_release(&err);
}

/* Each checked allocation failing in turn gives -ENOMEM and leaks nothing. */
static void test_alloc_failures(void **state)
{
    struct strbuf text = STRBUF_INIT;
    long n;

    (void)state;
    read_example("koord-scheduler-config.yaml", &text);
    for (n = 1;; n++) {
        struct strbuf err = STRBUF_INIT;
        struct sched_config *c = NULL;
        int r;

        alloc_fail_after(n);
        r = config_parse(text.buf, text.len, &fake_registry, &c, &err);
        if (!alloc_injected()) {
            alloc_fail_after(0);
            assert_int_equal(r, 0);
            sched_config_free(c);
            strbuf_release(&err);
            break;
        }
        alloc_fail_after(0);
        if (r != -ENOMEM)
            fail_msg("allocation %ld: got %d: %s", n, r, err.buf);
        assert_null(c);
        strbuf_release(&err);
    }
    assert_true(n > 20);
    strbuf_release(&text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_point_names, setup),
        cmocka_unit_test_setup(test_default_config, setup),
        cmocka_unit_test_setup(test_koord_default_profile, setup),
        cmocka_unit_test_setup(test_elastic_quota_args, setup),
        cmocka_unit_test_setup(test_parse_minimal, setup),
        cmocka_unit_test_setup(test_parse_fields_yaml_and_json, setup),
        cmocka_unit_test_setup(test_zero_values_default, setup),
        cmocka_unit_test_setup(test_merge_disable_all_then_enable, setup),
        cmocka_unit_test_setup(test_merge_reenable_in_place, setup),
        cmocka_unit_test_setup(test_merge_disable_then_append, setup),
        cmocka_unit_test_setup(test_expand_order, setup),
        cmocka_unit_test_setup(test_disable_at_one_point, setup),
        cmocka_unit_test_setup(test_score_weight_precedence, setup),
        cmocka_unit_test_setup(test_expand_follows_implemented_points, setup),
        cmocka_unit_test_setup(test_expand_direct, setup),
        cmocka_unit_test_setup(test_replace_single_points, setup),
        cmocka_unit_test_setup(test_args_storage, setup),
        cmocka_unit_test_setup(test_errors_document, setup),
        cmocka_unit_test_setup(test_errors_top_level, setup),
        cmocka_unit_test_setup(test_errors_leader_election_and_client, setup),
        cmocka_unit_test_setup(test_errors_profiles, setup),
        cmocka_unit_test_setup(test_errors_plugin_names, setup),
        cmocka_unit_test_setup(test_errors_framework, setup),
        cmocka_unit_test_setup(test_errors_queue_sort_args, setup),
        cmocka_unit_test_setup(test_errors_plugin_config, setup),
        cmocka_unit_test_setup(test_errors_plugin_init, setup),
        cmocka_unit_test_setup(test_errors_collected, setup),
        cmocka_unit_test_setup(test_examples, setup),
        cmocka_unit_test_setup(test_examples_real_args, setup),
        cmocka_unit_test_setup(test_real_registry, setup),
        cmocka_unit_test_setup(test_alloc_failures, setup),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
