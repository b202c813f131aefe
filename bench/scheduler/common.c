/*
 * The templates and the throughput collector of bench/scheduler (see sbench.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "codec/codec.h"
#include "common/bench.h"
#include "sbench.h"

/* Upstream's templates (test/integration/scheduler_perf/templates/), as JSON. Names are
 * given (generateName would make the benchmark look each pod up by a random name). */
#define PAUSE  "\"image\":\"registry.k8s.io/pause:3.10\",\"name\":\"pause\""
#define PORT80 "\"ports\":[{\"containerPort\":80}]"
#define RES(cpu, mem)                                                                              \
    "\"resources\":{\"limits\":{\"cpu\":\"" cpu "\",\"memory\":\"" mem "\"},\"requests\":"         \
    "{\"cpu\":\"" cpu "\",\"memory\":\"" mem "\"}}"
#define POD(meta, spec)                                                                            \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"@NAME@\"" meta "},"          \
    "\"spec\":{" spec "}}"
/* Upstream's node templates give capacity only, which kube-apiserver copies into the missing
 * allocatable (SetDefaults_NodeStatus); these carry both, as a kubelet reports them. */
#define NODE(pods)                                                                                 \
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"@NAME@\"},\"spec\":{},"     \
    "\"status\":{\"capacity\":{\"pods\":\"" pods "\",\"cpu\":\"4\",\"memory\":\"32Gi\"},"          \
    "\"allocatable\":{\"pods\":\"" pods "\",\"cpu\":\"4\",\"memory\":\"32Gi\"},"                   \
    "\"conditions\":[{\"status\":\"True\",\"type\":\"Ready\"}],\"phase\":\"Running\"}}"

static const char *const templates[] = {
    [SBENCH_NODE_DEFAULT] = NODE("110"),
    [SBENCH_NODE_WITH_NAME] = NODE("90000"),
    [SBENCH_POD_DEFAULT] =
        POD("", "\"containers\":[{" PAUSE "," PORT80 "," RES("100m", "500Mi") "}]"),
    [SBENCH_POD_LIGHT] =
        POD("", "\"containers\":[{" PAUSE "}],\"terminationGracePeriodSeconds\":0"),
    [SBENCH_POD_GATED] = POD("", "\"schedulingGates\":[{\"name\":\"test.k8s.io/hold\"}],"
                                 "\"containers\":[{" PAUSE "}]"),
    [SBENCH_POD_AFFINITY] =
        POD(",\"labels\":{\"color\":\"blue\"}",
            "\"affinity\":{\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
            "\"labelSelector\":{\"matchLabels\":{\"color\":\"blue\"}},\"topologyKey\":"
            "\"" SBENCH_ZONE_KEY "\",\"namespaces\":[\"sched-1\",\"sched-0\"]}]}},"
            "\"containers\":[{" PAUSE "," PORT80 "," RES("100m", "500Mi") "}]"),
    [SBENCH_POD_SPREAD] =
        POD(",\"labels\":{\"color\":\"blue\"}",
            "\"topologySpreadConstraints\":[{\"maxSkew\":5,\"topologyKey\":\"" SBENCH_ZONE_KEY
            "\",\"whenUnsatisfiable\":\"DoNotSchedule\",\"labelSelector\":{\"matchLabels\":"
            "{\"color\":\"blue\"}}}],"
            "\"containers\":[{" PAUSE "," PORT80 "," RES("100m", "500Mi") "}]"),
    [SBENCH_POD_LOW] = POD("", "\"terminationGracePeriodSeconds\":0,\"containers\":[{" PAUSE
                               "," PORT80 "," RES("900m", "500Mi") "}]"),
    [SBENCH_POD_HIGH] =
        POD("", "\"priorityClassName\":\"" SBENCH_HIGH_CLASS "\","
                "\"containers\":[{" PAUSE "," PORT80 "," RES("3000m", "500Mi") "}]"),
    [SBENCH_POD_LARGE_CPU] =
        POD("", "\"containers\":[{" PAUSE "," PORT80 ",\"resources\":{\"requests\":{\"cpu\":\"9\","
                "\"memory\":\"500Mi\"}}}]"),
};

cJSON *sbench_object(enum sbench_tpl t, const char *zone)
{
    cJSON *o = cJSON_Parse(templates[t]);

    CHECK(o);
    if (zone) {
        cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
        cJSON *labels = cJSON_AddObjectToObject(meta, "labels");
        CHECK(labels && cJSON_AddStringToObject(labels, SBENCH_ZONE_KEY, zone));
    }
    return o;
}

void sbench_bytes_init(struct sbench_bytes *b, enum sbench_tpl t, const char *zone)
{
    struct strbuf json = STRBUF_INIT;
    cJSON *o = sbench_object(t, zone);
    const char *p;

    strbuf_init(&b->pre);
    strbuf_init(&b->post);
    CHECK(json_print(o, &json) == 0);
    p = strstr(json.buf, "@NAME@");
    CHECK(p);
    strbuf_add(&b->pre, json.buf, (size_t)(p - json.buf));
    strbuf_addstr(&b->post, p + strlen("@NAME@"));
    strbuf_release(&json);
    cJSON_Delete(o);
}

void sbench_bytes_release(struct sbench_bytes *b)
{
    strbuf_release(&b->pre);
    strbuf_release(&b->post);
}

void sbench_bytes_render(const struct sbench_bytes *b, const char *name, struct strbuf *out)
{
    strbuf_reset(out);
    strbuf_add(out, b->pre.buf, b->pre.len);
    strbuf_addstr(out, name);
    strbuf_add(out, b->post.buf, b->post.len);
}

/* ---- the throughput collector ---- */

static void push(struct sbench_tput *t, double v)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
    }
    t->v[t->n++] = v;
}

static void *sampler(void *arg)
{
    struct sbench_tput *t = arg;
    struct timespec tick;
    size_t last = 0, skipped = 0;
    double last_t = now_s();
    bool started = false;

    /* upstream: lastScheduledCount is the count when the collector starts */
    last = atomic_load(t->count);
    CHECK(clock_gettime(CLOCK_MONOTONIC, &tick) == 0);
    CHECK(pthread_mutex_lock(&t->mu) == 0);
    for (;;) {
        size_t scheduled, fresh;
        double now;

        tick.tv_sec++; /* a ticker: every second from the start, whatever a sample took */
        while (!t->stop && pthread_cond_timedwait(&t->cv, &t->mu, &tick) != ETIMEDOUT)
            ;
        if (t->stop)
            break;
        now = now_s();
        scheduled = atomic_load(t->count);
        if (scheduled == 0)
            continue;
        if (!started) {
            /* the first sample is likely an outlier: creating and sampling start apart */
            started = true;
            last = scheduled;
            last_t = now;
            continue;
        }
        fresh = scheduled - last;
        if (fresh == 0) {
            skipped++;
            continue;
        }
        for (size_t i = 0; i <= skipped; i++)
            push(t, (double)fresh / (now - last_t));
        last = scheduled;
        last_t = now;
        skipped = 0;
    }
    CHECK(pthread_mutex_unlock(&t->mu) == 0);
    return NULL;
}

void sbench_tput_start(struct sbench_tput *t, atomic_size_t *count)
{
    pthread_condattr_t ca;

    memset(t, 0, sizeof(*t));
    t->count = count;
    CHECK(pthread_mutex_init(&t->mu, NULL) == 0);
    CHECK(pthread_condattr_init(&ca) == 0);
    CHECK(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0);
    CHECK(pthread_cond_init(&t->cv, &ca) == 0);
    (void)pthread_condattr_destroy(&ca);
    CHECK(pthread_create(&t->th, NULL, sampler, t) == 0);
    t->running = true;
}

double sbench_perc(const double *v, size_t n, unsigned p)
{
    size_t k;

    if (!n)
        return 0;
    k = (n * p + 99) / 100; /* ceil(n * p / 100) */
    return v[k ? k - 1 : 0];
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void sbench_sort(double *v, size_t n)
{
    if (n)
        qsort(v, n, sizeof(*v), cmp_double);
}

void sbench_tput_stop(struct sbench_tput *t, struct sbench_tput_summary *ret)
{
    double sum = 0;

    memset(ret, 0, sizeof(*ret));
    if (!t->running)
        return;
    CHECK(pthread_mutex_lock(&t->mu) == 0);
    t->stop = true;
    CHECK(pthread_cond_signal(&t->cv) == 0);
    CHECK(pthread_mutex_unlock(&t->mu) == 0);
    CHECK(pthread_join(t->th, NULL) == 0);
    t->running = false;
    sbench_sort(t->v, t->n);
    for (size_t i = 0; i < t->n; i++)
        sum += t->v[i];
    ret->samples = t->n;
    if (t->n) {
        ret->avg = sum / (double)t->n;
        ret->p50 = sbench_perc(t->v, t->n, 50);
        ret->p90 = sbench_perc(t->v, t->n, 90);
        ret->p95 = sbench_perc(t->v, t->n, 95);
        ret->p99 = sbench_perc(t->v, t->n, 99);
    }
    free(t->v);
    t->v = NULL;
    (void)pthread_cond_destroy(&t->cv);
    (void)pthread_mutex_destroy(&t->mu);
}
