/* The scheduler's metrics of metrics.h. */
#include "sched/metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hmap.h"

enum kind { COUNTER, GAUGE, HISTOGRAM };

struct def {
    const char *name;
    const char *help;
    double start, factor; /* exponential buckets */
    enum kind kind;
    int nbuckets;
};

static const struct def defs[] = {
    {"scheduler_schedule_attempts_total",
     "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not "
     "be scheduled, while 'error' means an internal scheduler problem.",
     0, 0, COUNTER, 0},
    {"scheduler_scheduling_attempt_duration_seconds",
     "Scheduling attempt latency in seconds (scheduling algorithm + binding)", 0.001, 2, HISTOGRAM,
     15},
    {"scheduler_scheduling_algorithm_duration_seconds", "Scheduling algorithm latency in seconds",
     0.001, 2, HISTOGRAM, 15},
    {"scheduler_pod_scheduling_sli_duration_seconds",
     "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue "
     "and might involve multiple scheduling attempts.",
     0.01, 2, HISTOGRAM, 20},
    {"scheduler_pod_scheduling_attempts", "Number of attempts to successfully schedule a pod.", 1,
     2, HISTOGRAM, 5},
    {"scheduler_framework_extension_point_duration_seconds",
     "Latency for running all plugins of a specific extension point.", 0.0001, 2, HISTOGRAM, 12},
    {"scheduler_plugin_execution_duration_seconds",
     "Duration for running a plugin at a specific extension point.", 0.00001, 1.5, HISTOGRAM, 20},
    {"scheduler_preemption_attempts_total", "Total preemption attempts in the cluster till now", 0,
     0, COUNTER, 0},
    {"scheduler_preemption_victims", "Number of selected preemption victims", 1, 2, HISTOGRAM, 7},
    {"scheduler_pending_pods",
     "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
     "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
     "unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the "
     "number of unschedulable pods that the scheduler never attempted to schedule because they "
     "are gated.",
     0, 0, GAUGE, 0},
    {"scheduler_queue_incoming_pods_total",
     "Number of pods added to scheduling queues by event and queue type.", 0, 0, COUNTER, 0},
    {"scheduler_unschedulable_pods",
     "The number of unschedulable pods broken down by plugin name. A pod will increment the "
     "gauge for all plugins that caused it to not schedule and so this metric have meaning only "
     "when broken down by plugin.",
     0, 0, GAUGE, 0},
    {"scheduler_cache_size",
     "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.", 0, 0, GAUGE, 0},
    {"scheduler_goroutines",
     "Number of running goroutines split by the work they do such as binding.", 0, 0, GAUGE, 0},
};

#define NDEFS (sizeof(defs) / sizeof(defs[0]))

struct sched_series {
    const struct def *def;
    char *labels;
    double value; /* counter, gauge; histogram: sum */
    uint64_t count;
    uint64_t buckets[24];
};

struct sched_metrics {
    pthread_mutex_t lock;
    struct hmap series; /* "name{labels}" -> struct sched_series */
};

struct sched_metrics *sched_metrics_new(void)
{
    struct sched_metrics *m = xcalloc(1, sizeof(*m));

    pthread_mutex_init(&m->lock, NULL);
    hmap_init(&m->series);
    return m;
}

void sched_metrics_free(struct sched_metrics *m)
{
    struct hmap_entry *e;
    size_t it;

    if (!m)
        return;
    for (e = hmap_first(&m->series, &it); e; e = hmap_next(&m->series, e, &it)) {
        struct sched_series *s = e->value;
        free(s->labels);
        free(s);
    }
    hmap_release(&m->series);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static const struct def *find_def(const char *name)
{
    for (size_t i = 0; i < NDEFS; i++)
        if (!strcmp(defs[i].name, name))
            return &defs[i];
    return NULL;
}

/* The series, created on first use; under the lock. Called several times per scheduled pod:
 * the key is built on the stack when it fits, without printf or malloc. */
static struct sched_series *get(struct sched_metrics *m, const char *name, const char *labels)
{
    struct strbuf key = STRBUF_INIT;
    size_t nl = strlen(name), ll = strlen(labels);
    char buf[384], *k = buf;
    struct sched_series *s;

    if (nl + ll + 3 <= sizeof(buf)) {
        memcpy(buf, name, nl);
        buf[nl] = '{';
        memcpy(buf + nl + 1, labels, ll);
        buf[nl + 1 + ll] = '}';
        buf[nl + 2 + ll] = '\0';
    } else {
        strbuf_addf(&key, "%s{%s}", name, labels);
        k = key.buf;
    }
    s = hmap_get(&m->series, k);
    if (!s) {
        const struct def *d = find_def(name);

        if (d) {
            s = xcalloc(1, sizeof(*s));
            s->def = d;
            s->labels = xstrdup(labels);
            hmap_put(&m->series, k, s);
        }
    }
    strbuf_release(&key);
    return s;
}

struct sched_series *sched_metrics_series(struct sched_metrics *m, const char *name,
                                          const char *labels)
{
    struct sched_series *s;

    if (!m)
        return NULL;
    pthread_mutex_lock(&m->lock);
    s = get(m, name, labels);
    pthread_mutex_unlock(&m->lock);
    return s;
}

/* Under the lock. */
static void observe_locked(struct sched_series *s, double v)
{
    double le = s->def->start;

    s->value += v;
    s->count++;
    for (int i = 0; i < s->def->nbuckets; i++, le *= s->def->factor)
        if (v <= le)
            s->buckets[i]++;
}

void sched_metrics_series_add(struct sched_metrics *m, struct sched_series *s, double v)
{
    if (!m || !s)
        return;
    pthread_mutex_lock(&m->lock);
    s->value += v;
    pthread_mutex_unlock(&m->lock);
}

void sched_metrics_series_observe(struct sched_metrics *m, struct sched_series *s, double v)
{
    if (!m || !s || s->def->kind != HISTOGRAM)
        return;
    pthread_mutex_lock(&m->lock);
    observe_locked(s, v);
    pthread_mutex_unlock(&m->lock);
}

void sched_metrics_add(struct sched_metrics *m, const char *name, const char *labels, double v)
{
    struct sched_series *s;

    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    if ((s = get(m, name, labels)))
        s->value += v;
    pthread_mutex_unlock(&m->lock);
}

void sched_metrics_set(struct sched_metrics *m, const char *name, const char *labels, double v)
{
    struct sched_series *s;

    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    if ((s = get(m, name, labels)))
        s->value = v;
    pthread_mutex_unlock(&m->lock);
}

void sched_metrics_observe(struct sched_metrics *m, const char *name, const char *labels, double v)
{
    struct sched_series *s;

    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    s = get(m, name, labels);
    if (s && s->def->kind == HISTOGRAM)
        observe_locked(s, v);
    pthread_mutex_unlock(&m->lock);
}

static int cmp_series(const void *a, const void *b)
{
    const struct sched_series *x = *(struct sched_series *const *)a,
                              *y = *(struct sched_series *const *)b;
    int c = strcmp(x->def->name, y->def->name);

    return c ? c : strcmp(x->labels, y->labels);
}

static void bucket_labels(struct strbuf *out, const char *name, const char *labels, const char *le)
{
    strbuf_addf(out, "%s_bucket{%s%sle=\"%s\"}", name, labels, *labels ? "," : "", le);
}

void sched_metrics_render(struct sched_metrics *m, struct strbuf *out)
{
    struct sched_series **v = NULL;
    struct hmap_entry *e;
    size_t it, n = 0;
    const struct def *last = NULL;

    pthread_mutex_lock(&m->lock);
    v = xcalloc(m->series.n ? m->series.n : 1, sizeof(struct sched_series *));
    for (e = hmap_first(&m->series, &it); e; e = hmap_next(&m->series, e, &it))
        v[n++] = e->value;
    qsort(v, n, sizeof(struct sched_series *), cmp_series);
    for (size_t i = 0; i < n; i++) {
        struct sched_series *s = v[i];
        const struct def *d = s->def;

        CHECK(d);
        const char *br = *s->labels ? "{" : "", *kt = *s->labels ? "}" : "";
        if (d != last) {
            strbuf_addf(out, "# HELP %s %s\n# TYPE %s %s\n", d->name, d->help, d->name,
                        d->kind == COUNTER ? "counter"
                        : d->kind == GAUGE ? "gauge"
                                           : "histogram");
            last = d;
        }
        if (d->kind != HISTOGRAM) {
            strbuf_addf(out, "%s%s%s%s %.17g\n", d->name, br, s->labels, kt, s->value);
            continue;
        }
        {
            double le = d->start;
            for (int b = 0; b < d->nbuckets; b++, le *= d->factor) {
                char buf[32];
                (void)snprintf(buf, sizeof(buf), "%.17g", le);
                bucket_labels(out, d->name, s->labels, buf);
                strbuf_addf(out, " %llu\n", (unsigned long long)s->buckets[b]);
            }
            bucket_labels(out, d->name, s->labels, "+Inf");
            strbuf_addf(out, " %llu\n", (unsigned long long)s->count);
            strbuf_addf(out, "%s_sum%s%s%s %.17g\n", d->name, br, s->labels, kt, s->value);
            strbuf_addf(out, "%s_count%s%s%s %llu\n", d->name, br, s->labels, kt,
                        (unsigned long long)s->count);
        }
    }
    pthread_mutex_unlock(&m->lock);
    free(v);
}
