/*
 * Request counters and latency histograms for /metrics (see metrics.h).
 */
#include "apiserver/metrics.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/reqinfo.h"
#include "base/base.h"

/* kube-apiserver's request latency buckets (seconds). */
static const double buckets[] = {0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2,
                                 3,     4,     5,    6,   8,   10,  15,  20,  30,  45,   60};
#define NBUCKETS   ARRAY_SIZE(buckets)
#define MAX_SERIES 4096 /* past this, new label sets are not recorded */

struct series {
    char *labels;           /* rendered label set without code: verb="GET",group="",... */
    int codes[6][8];        /* by class (code / 100, 0 = other): the distinct codes seen, and */
    uint64_t by_code[6][8]; /* how many requests each answered */
    uint64_t observed;      /* histogram: count, sum, cumulative buckets */
    double sum;
    uint64_t bucket[NBUCKETS];
};

struct api_metrics {
    pthread_mutex_t lock;
    struct series *v;
    size_t n, alloc;
    int64_t watches;
};

struct api_metrics *api_metrics_new(void)
{
    struct api_metrics *m = xcalloc(1, sizeof(*m));

    CHECK(pthread_mutex_init(&m->lock, NULL) == 0);
    return m;
}

void api_metrics_free(struct api_metrics *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].labels);
    free(m->v);
    (void)pthread_mutex_destroy(&m->lock);
    free(m);
}

/* A label value, escaped as the text format requires (backslash, quote, newline). */
static void add_label(struct strbuf *sb, const char *name, const char *value)
{
    strbuf_addf(sb, "%s%s=\"", sb->len ? "," : "", name);
    for (const char *p = value; *p; p++) {
        if (*p == '\\' || *p == '"')
            strbuf_addch(sb, '\\');
        if (*p == '\n')
            strbuf_addstr(sb, "\\n");
        else
            strbuf_addch(sb, *p);
    }
    strbuf_addch(sb, '"');
}

static void labels_of(const struct api_reqinfo *ri, struct strbuf *sb)
{
    char verb[32];
    size_t i;

    for (i = 0; ri->verb[i] && i < sizeof(verb) - 1; i++)
        verb[i] = (char)toupper((unsigned char)ri->verb[i]);
    verb[i] = '\0';
    add_label(sb, "verb", verb);
    add_label(sb, "group", ri->group);
    add_label(sb, "version", ri->version);
    add_label(sb, "resource", ri->resource);
    add_label(sb, "subresource", ri->subresource);
    add_label(sb, "scope",
              *ri->name && strcmp(ri->verb, "list") && strcmp(ri->verb, "watch") ? "resource"
              : *ri->namespace                                                   ? "namespace"
                                                                                 : "cluster");
    add_label(sb, "component", "apiserver");
}

static struct series *find(struct api_metrics *m, const char *labels)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->v[i].labels, labels))
            return &m->v[i];
    if (m->n >= MAX_SERIES)
        return NULL;
    if (m->n == m->alloc) {
        m->alloc = m->alloc ? m->alloc * 2 : 32;
        m->v = xrealloc(m->v, m->alloc * sizeof(*m->v));
    }
    memset(&m->v[m->n], 0, sizeof(m->v[m->n]));
    m->v[m->n].labels = xstrdup(labels);
    return &m->v[m->n++];
}

void api_metrics_request(struct api_metrics *m, const struct api_reqinfo *ri, int code,
                         double seconds)
{
    struct strbuf labels = STRBUF_INIT;
    struct series *s;
    int cls = code >= 100 && code < 600 ? code / 100 : 0;

    if (!m || !ri || !ri->is_resource)
        return;
    labels_of(ri, &labels);
    CHECK(pthread_mutex_lock(&m->lock) == 0);
    if ((s = find(m, labels.buf))) {
        for (size_t i = 0; i < ARRAY_SIZE(s->codes[cls]); i++) {
            if (s->codes[cls][i] == code || s->codes[cls][i] == 0) {
                s->codes[cls][i] = code;
                s->by_code[cls][i]++;
                break;
            }
        }
        if (strcmp(ri->verb, "watch")) {
            s->observed++;
            s->sum += seconds;
            for (size_t i = 0; i < NBUCKETS; i++)
                if (seconds <= buckets[i])
                    s->bucket[i]++;
        }
    }
    CHECK(pthread_mutex_unlock(&m->lock) == 0);
    strbuf_release(&labels);
}

void api_metrics_watch(struct api_metrics *m, int delta)
{
    if (!m)
        return;
    CHECK(pthread_mutex_lock(&m->lock) == 0);
    m->watches += delta;
    CHECK(pthread_mutex_unlock(&m->lock) == 0);
}

void api_metrics_render(struct api_metrics *m, uint64_t revision, struct strbuf *out)
{
    CHECK(pthread_mutex_lock(&m->lock) == 0);
    strbuf_addstr(out, "# HELP apiserver_request_total Counter of apiserver requests broken out "
                       "for each verb, group, version, resource, scope, component, and HTTP "
                       "response code.\n# TYPE apiserver_request_total counter\n");
    for (size_t i = 0; i < m->n; i++) {
        const struct series *s = &m->v[i];
        for (int cls = 0; cls < 6; cls++)
            for (size_t j = 0; j < ARRAY_SIZE(s->codes[cls]) && s->codes[cls][j]; j++)
                strbuf_addf(out, "apiserver_request_total{%s,code=\"%d\"} %llu\n", s->labels,
                            s->codes[cls][j], (unsigned long long)s->by_code[cls][j]);
    }
    strbuf_addstr(out, "# HELP apiserver_request_duration_seconds Response latency distribution "
                       "in seconds for each verb, group, version, resource, subresource, scope "
                       "and component.\n# TYPE apiserver_request_duration_seconds histogram\n");
    for (size_t i = 0; i < m->n; i++) {
        const struct series *s = &m->v[i];
        if (!s->observed)
            continue;
        for (size_t b = 0; b < NBUCKETS; b++)
            strbuf_addf(out, "apiserver_request_duration_seconds_bucket{%s,le=\"%g\"} %llu\n",
                        s->labels, buckets[b], (unsigned long long)s->bucket[b]);
        strbuf_addf(out, "apiserver_request_duration_seconds_bucket{%s,le=\"+Inf\"} %llu\n",
                    s->labels, (unsigned long long)s->observed);
        strbuf_addf(out, "apiserver_request_duration_seconds_sum{%s} %.9g\n", s->labels, s->sum);
        strbuf_addf(out, "apiserver_request_duration_seconds_count{%s} %llu\n", s->labels,
                    (unsigned long long)s->observed);
    }
    strbuf_addf(out,
                "# HELP apiserver_longrunning_requests Gauge of all active long-running apiserver "
                "requests broken out by verb, group, version, resource, scope and component.\n"
                "# TYPE apiserver_longrunning_requests gauge\n"
                "apiserver_longrunning_requests{verb=\"WATCH\",component=\"apiserver\"} %lld\n",
                (long long)m->watches);
    CHECK(pthread_mutex_unlock(&m->lock) == 0);
    strbuf_addf(out,
                "# HELP koord_store_revision The store's latest revision (resourceVersion).\n"
                "# TYPE koord_store_revision gauge\nkoord_store_revision %llu\n",
                (unsigned long long)revision);
}
