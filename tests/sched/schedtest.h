/*
 * Helpers shared by the scheduler's unit tests: pods, nodes and NodeInfos from literal JSON,
 * failing the test when the JSON does not parse or decode. Include after <cmocka.h>.
 */
#ifndef KOORD_TESTS_SCHEDTEST_H
#define KOORD_TESTS_SCHEDTEST_H

#ifndef cmocka_unit_test
#error "include <cmocka.h> before schedtest.h"
#endif

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/field.h"
#include "base/base.h"
#include "base/hmap.h"
#include "base/strbuf.h"
#include "sched/framework/framework.h"

/* A pod from JSON (apiVersion/kind may be left out); unref with sched_pod_unref(). */
static inline struct sched_pod *P(const char *json)
{
    cJSON *o = cJSON_Parse(json);
    struct sched_pod *p = NULL;

    if (!o)
        fail_msg("bad test JSON: %s", json);
    if (sched_pod_decode(o, &p) < 0)
        fail_msg("pod does not decode: %s", json);
    cJSON_Delete(o);
    return p;
}

/* A node from JSON; unref with sched_node_unref(). */
static inline struct sched_node *N(const char *json)
{
    cJSON *o = cJSON_Parse(json);
    struct sched_node *n = NULL;

    if (!o)
        fail_msg("bad test JSON: %s", json);
    if (sched_node_decode(o, &n) < 0)
        fail_msg("node does not decode: %s", json);
    cJSON_Delete(o);
    return n;
}

/* A NodeInfo of the node json with the pods given as JSON strings (NULL-terminated). Free with
 * sched_node_info_free(). */
static inline struct sched_node_info *NI(const char *node_json, ...)
{
    struct sched_node *n = N(node_json);
    struct sched_node_info *ni = sched_node_info_new(n->name);
    const char *pj;
    va_list ap;

    sched_node_info_set_node(ni, n);
    sched_node_unref(n);
    va_start(ap, node_json);
    while ((pj = va_arg(ap, const char *))) {
        struct sched_pod *p = P(pj);
        sched_node_info_add_pod(ni, p);
        sched_pod_unref(p);
    }
    va_end(ap);
    return ni;
}

/* The status's reasons joined with ", " (static buffer; one at a time). */
static inline const char *MSG(const struct sched_status *st)
{
    static char buf[4096];
    const char *p = st->buf;
    size_t len = 0;

    buf[0] = 0;
    for (unsigned i = 0; i < st->n && len < sizeof(buf) - 1; i++) {
        int w = snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? ", " : "", p);
        if (w < 0)
            break;
        len += (size_t)w;
        p += strlen(p) + 1;
    }
    return buf;
}

/*
 * Asserts that plugin pl refuses args (a JSON object, NULL for none) with exactly want: its
 * field errors as kube renders them, one a line, under the path "args".
 */
static inline void assert_args_refused(const struct sched_plugin *pl, const cJSON *args,
                                       const char *want)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf got = STRBUF_INIT;
    void *self = NULL;
    int r = pl->init(args, "args", NULL, &self, &errs);

    for (size_t i = 0; i < errs.n; i++) {
        if (i)
            strbuf_addch(&got, '\n');
        field_error_format(&errs.v[i], &got);
    }
    if (r != -EINVAL || self || strcmp(got.buf ? got.buf : "", want)) {
        char *a = args ? cJSON_PrintUnformatted(args) : NULL;
        print_error("%s args %s: init = %d\n got: %s\nwant: %s\n", pl->name, a ? a : "null", r,
                    got.buf ? got.buf : "", want);
        cJSON_free(a);
        strbuf_release(&got);
        field_errors_release(&errs);
        fail();
    }
    strbuf_release(&got);
    field_errors_release(&errs);
}

/* ---- single-quoted JSON fixtures and hand-built snapshots (the plugins that read the whole
 * snapshot: PodTopologySpread, InterPodAffinity) ---- */

/* JSON written with ' for " (test literals stay readable). */
static inline cJSON *fx_json(const char *s)
{
    char *d = xstrdup(s);
    cJSON *o;

    for (char *p = d; *p; p++)
        if (*p == '\'')
            *p = '"';
    o = cJSON_Parse(d);
    if (!o)
        fail_msg("bad test JSON: %s", d);
    free(d);
    return o;
}

/* A pod from printf-formatted single-quoted JSON. */
static inline struct sched_pod *fx_pod(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline struct sched_pod *fx_pod(const char *fmt, ...)
{
    char buf[4096];
    struct sched_pod *p = NULL;
    va_list ap;
    cJSON *o;

    va_start(ap, fmt);
    (void)vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    o = fx_json(buf);
    assert_int_equal(sched_pod_decode(o, &p), 0);
    cJSON_Delete(o);
    assert_null(p->invalid);
    return p;
}

/* A NodeInfo for node name with labels (single-quoted JSON members) and the given pods (their
 * references are taken over; NULL-terminated). */
static inline struct sched_node_info *fx_node_spec(const char *name, const char *labels,
                                                   const char *spec, ...)
{
    char buf[2048];
    struct sched_node_info *ni = sched_node_info_new(name);
    struct sched_node *n = NULL;
    struct sched_pod *p;
    va_list ap;
    cJSON *o;

    (void)snprintf(buf, sizeof(buf), "{'metadata':{'name':'%s','labels':{%s}},'spec':{%s}}", name,
                   labels, spec);
    o = fx_json(buf);
    assert_int_equal(sched_node_decode(o, &n), 0);
    cJSON_Delete(o);
    sched_node_info_set_node(ni, n);
    sched_node_unref(n);
    va_start(ap, spec);
    while ((p = va_arg(ap, struct sched_pod *))) {
        sched_node_info_add_pod(ni, p);
        sched_pod_unref(p);
    }
    va_end(ap);
    return ni;
}
#define fx_node(name, labels, ...) fx_node_spec(name, labels, "", __VA_ARGS__)

#define FX_MAX                     16

struct fx {
    struct sched_node_info *ni[FX_MAX];
    struct sched_node_info *aff[FX_MAX], *anti[FX_MAX];
    size_t n;
    struct hmap by_name;
    struct sched_snapshot snap;
};

/* Builds the snapshot of the NodeInfos given (taken over; NULL-terminated). */
static inline void fx_init(struct fx *f, ...)
{
    struct sched_node_info *ni;
    va_list ap;

    memset(f, 0, sizeof(*f));
    hmap_init(&f->by_name);
    va_start(ap, f);
    while ((ni = va_arg(ap, struct sched_node_info *))) {
        assert_true(f->n < FX_MAX);
        f->ni[f->n++] = ni;
        hmap_put(&f->by_name, ni->name, ni);
        if (ni->n_with_affinity)
            f->aff[f->snap.nwith_affinity++] = ni;
        if (ni->n_with_required_anti)
            f->anti[f->snap.nwith_required_anti++] = ni;
    }
    va_end(ap);
    f->snap.nodes = f->ni;
    f->snap.nnodes = f->n;
    f->snap.with_affinity = f->aff;
    f->snap.with_required_anti = f->anti;
    f->snap.by_name = &f->by_name;
}

static inline void fx_release(struct fx *f)
{
    for (size_t i = 0; i < f->n; i++)
        sched_node_info_free(f->ni[i]);
    hmap_release(&f->by_name);
}

static inline struct sched_node_info *fx_get(struct fx *f, const char *name)
{
    struct sched_node_info *ni = sched_snapshot_get(&f->snap, name);
    assert_non_null(ni);
    return ni;
}

#endif
