/*
 * metrics.k8s.io/v1beta1 from the NodeMetric store: see metricsk8s.h. Nothing is kept here: every
 * request reads the NodeMetrics (picked parts only) and the informers' Nodes and Pods, so the
 * answer is as fresh as the last report and there is no second copy to keep in step.
 */
#include "manager/metricsk8s/metricsk8s.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/duration.h"
#include "api/labels.h"
#include "api/quantity.h"
#include "api/rfc3339.h"
#include "apiserver/apiserver.h"
#include "apiserver/auth.h"
#include "apiserver/reqinfo.h"
#include "apiserver/status.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "http/server.h"
#include "kube/informer.h"
#include "manager/nodemetric/nodemetric.h"
#include "manager/recommendation/model.h"

#define DEFAULT_AGGREGATE_S 300 /* the agent's defaults and floors (agent/report/policy.h) */
#define MIN_AGGREGATE_S     60
#define DEFAULT_REPORT_S    60
#define MIN_REPORT_S        30
#define STALE_INTERVALS     3 /* a report older than this many intervals is not served */

struct metricsk8s_server {
    struct metricsk8s_opts o;
};

/* ---- the objects ---- */

static int64_t policy_seconds(const cJSON *top, const char *name, int64_t def, int64_t floor)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(top, "spec"),
                                         "metricCollectPolicy"),
        name);
    int64_t s = cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble < 1e9
                    ? (int64_t)v->valuedouble
                    : def;

    return s < floor ? floor : s;
}

int metricsk8s_report_time(const cJSON *top, int64_t now_s, int64_t *ret_ts, int64_t *ret_window_s)
{
    const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(top, "status"), "updateTime"));
    int64_t ts,
        report = policy_seconds(top, "reportIntervalSeconds", DEFAULT_REPORT_S, MIN_REPORT_S);
    int32_t ns;

    if (!t || rfc3339_parse(t, &ts, &ns) < 0)
        return -ENOENT;
    if (now_s - ts > STALE_INTERVALS * report)
        return -ESTALE;
    *ret_ts = ts;
    *ret_window_s =
        policy_seconds(top, "aggregateDurationSeconds", DEFAULT_AGGREGATE_S, MIN_AGGREGATE_S);
    return 0;
}

/* cpu in nanocores and memory in bytes of a {cpu, memory} resource list; false when either is
 * missing or unreadable. */
static bool read_usage(const cJSON *res, int64_t *cpu_n, int64_t *mem)
{
    const char *c = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "cpu"));
    const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "memory"));
    struct quantity q;

    return c && m && quantity_parse(c, &q) == 0 &&
           quantity_scaled_value(&q, QUANTITY_SCALE_NANO, cpu_n) == 0 && *cpu_n >= 0 &&
           quantity_parse(m, &q) == 0 && quantity_value(&q, mem) == 0 && *mem >= 0;
}

/* {"cpu": nanocores as metrics-server prints them, "memory": bytes in BinarySI}. */
static cJSON *usage_object(int64_t cpu_n, int64_t mem)
{
    char buf[QUANTITY_STR_MAX];
    struct quantity q;
    cJSON *u = cJSON_CreateObject();

    CHECK(u);
    quantity_from_scaled(cpu_n, QUANTITY_SCALE_NANO, &q);
    (void)quantity_format(&q, buf);
    CHECK(cJSON_AddStringToObject(u, "cpu", buf));
    quantity_from_int(mem, QUANTITY_BINARY_SI, &q);
    (void)quantity_format(&q, buf);
    CHECK(cJSON_AddStringToObject(u, "memory", buf));
    return u;
}

/* kind, apiVersion, metadata {name, [namespace,] creationTimestamp, labels of src}, timestamp
 * and window. */
static cJSON *new_metrics(const char *kind, const cJSON *src, int64_t ts, int64_t window_s,
                          int64_t now_s)
{
    const cJSON *smeta = cJSON_GetObjectItemCaseSensitive(src, "metadata");
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(smeta, "name"));
    const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(smeta, "namespace"));
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(smeta, "labels");
    char buf[RFC3339_STR_MAX], dur[DURATION_STR_MAX];
    cJSON *o = cJSON_CreateObject(), *meta;

    CHECK(o);
    CHECK(cJSON_AddStringToObject(o, "kind", kind));
    CHECK(cJSON_AddStringToObject(o, "apiVersion", METRICSK8S_GROUP "/" METRICSK8S_VERSION));
    CHECK(meta = cJSON_AddObjectToObject(o, "metadata"));
    CHECK(cJSON_AddStringToObject(meta, "name", name ? name : ""));
    if (ns)
        CHECK(cJSON_AddStringToObject(meta, "namespace", ns));
    (void)rfc3339_format(now_s, buf);
    CHECK(cJSON_AddStringToObject(meta, "creationTimestamp", buf));
    if (cJSON_IsObject(labels) && labels->child)
        CHECK(cJSON_AddItemToObject(meta, "labels", cJSON_Duplicate(labels, true)));
    (void)rfc3339_format(ts, buf);
    CHECK(cJSON_AddStringToObject(o, "timestamp", buf));
    (void)duration_format(window_s * 1000000000, dur); /* metav1.Duration: "5m0s" */
    CHECK(cJSON_AddStringToObject(o, "window", dur));
    return o;
}

cJSON *metricsk8s_node_metrics(const cJSON *top, const cJSON *node, int64_t now_s)
{
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(top, "status"),
                                             "nodeMetric"),
            "nodeUsage"),
        "resources");
    int64_t ts, window, cpu, mem;
    cJSON *o;

    if (metricsk8s_report_time(top, now_s, &ts, &window) < 0 || !read_usage(res, &cpu, &mem))
        return NULL;
    o = new_metrics("NodeMetrics", node, ts, window, now_s);
    CHECK(cJSON_AddItemToObject(o, "usage", usage_object(cpu, mem)));
    return o;
}

/* total split by shares (summing to 1), the rounding rest on the last. */
static void split(int64_t total, const double *shares, size_t n, int64_t *out)
{
    int64_t given = 0;

    for (size_t i = 0; i + 1 < n; i++) {
        out[i] = (int64_t)((double)total * shares[i]);
        if (out[i] > total - given)
            out[i] = total - given;
        given += out[i];
    }
    out[n - 1] = total - given;
}

cJSON *metricsk8s_pod_metrics(const cJSON *top, const cJSON *entry, const cJSON *pod, int64_t now_s)
{
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(entry, "podUsage"), "resources");
    struct rec_container *cs = NULL;
    int64_t ts, window, cpu, mem, *cpus, *mems;
    double *shares;
    size_t n;
    cJSON *o, *arr;

    if (metricsk8s_report_time(top, now_s, &ts, &window) < 0 || !read_usage(res, &cpu, &mem))
        return NULL;
    n = rec_pod_containers(pod, &cs);
    if (!n) {
        free(cs);
        return NULL;
    }
    shares = xcalloc(n, sizeof(*shares));
    cpus = xcalloc(n, sizeof(*cpus));
    mems = xcalloc(n, sizeof(*mems));
    rec_split(cs, n, true, shares);
    split(cpu, shares, n, cpus);
    rec_split(cs, n, false, shares);
    split(mem, shares, n, mems);
    o = new_metrics("PodMetrics", pod, ts, window, now_s);
    CHECK(arr = cJSON_AddArrayToObject(o, "containers"));
    for (size_t i = 0; i < n; i++) {
        cJSON *c = cJSON_CreateObject();
        CHECK(c && cJSON_AddItemToArray(arr, c));
        CHECK(cJSON_AddStringToObject(c, "name", cs[i].name));
        CHECK(cJSON_AddItemToObject(c, "usage", usage_object(cpus[i], mems[i])));
    }
    free(shares);
    free(cpus);
    free(mems);
    free(cs);
    return o;
}

/* ---- selectors ---- */

void metricsk8s_selectors_release(struct metricsk8s_selectors *sel)
{
    label_selector_free(sel->labels);
    for (size_t i = 0; i < sel->nfields; i++)
        free(sel->fields[i].value);
    free(sel->fields);
    *sel = (struct metricsk8s_selectors){0}; /* released twice is fine (a failed parse) */
}

/* Parses fs into sel; 0, or -EINVAL with the message in err. */
static int parse_fields(const char *fs, bool pods, struct metricsk8s_selectors *sel,
                        struct strbuf *err)
{
    const char *p = fs;

    while (*p) {
        struct strbuf k = STRBUF_INIT, v = STRBUF_INIT;
        bool neq = false, op = false;
        struct metricsk8s_field_req *f;

        for (; *p && *p != ','; p++) {
            if (!op && (*p == '=' || (*p == '!' && p[1] == '='))) {
                neq = *p == '!';
                if (p[1] == '=')
                    p++;
                op = true;
                continue;
            }
            if (*p == '\\' && p[1])
                p++;
            strbuf_addch(op ? &v : &k, *p);
        }
        if (!op || !k.len) {
            strbuf_addf(err, "invalid field selector: \"%s\"", fs);
        } else if (strcmp(k.buf, "metadata.name") &&
                   (!pods || strcmp(k.buf, "metadata.namespace"))) {
            strbuf_addf(err, "field label not supported: %s", k.buf);
        } else {
            sel->fields = xrealloc(sel->fields, (sel->nfields + 1) * sizeof(*sel->fields));
            f = &sel->fields[sel->nfields++];
            (void)snprintf(f->key, sizeof(f->key), "%s", k.buf);
            f->neq = neq;
            f->value = strbuf_detach(&v, NULL);
        }
        strbuf_release(&k);
        strbuf_release(&v);
        if (err->len)
            return -EINVAL;
        if (*p == ',')
            p++;
    }
    return 0;
}

int metricsk8s_selectors_parse(const char *ls, const char *fs, bool pods,
                               struct metricsk8s_selectors *ret, struct strbuf *err)
{
    *ret = (struct metricsk8s_selectors){0};
    if ((ls && *ls && label_selector_parse(ls, &ret->labels, err) < 0) ||
        (fs && *fs && parse_fields(fs, pods, ret, err) < 0)) {
        metricsk8s_selectors_release(ret);
        return -EINVAL;
    }
    return 0;
}

bool metricsk8s_selected(const struct metricsk8s_selectors *sel, const cJSON *obj)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");

    if (sel->labels &&
        !label_selector_matches(sel->labels, cJSON_GetObjectItemCaseSensitive(meta, "labels")))
        return false;
    for (size_t i = 0; i < sel->nfields; i++) {
        const char *v = cJSON_GetStringValue(
            cJSON_GetObjectItemCaseSensitive(meta, sel->fields[i].key + strlen("metadata.")));
        if ((strcmp(v ? v : "", sel->fields[i].value) == 0) == sel->fields[i].neq)
            return false;
    }
    return true;
}

/* ---- the server ---- */

struct metricsk8s_server *metricsk8s_server_new(const struct metricsk8s_opts *opts)
{
    struct metricsk8s_server *s = xcalloc(1, sizeof(*s));

    s->o = *opts;
    return s;
}

void metricsk8s_server_free(struct metricsk8s_server *s)
{
    free(s);
}

bool metricsk8s_path(const char *path)
{
    size_t n = strlen(METRICSK8S_PREFIX);

    return !strncmp(path, METRICSK8S_PREFIX, n) && (path[n] == '\0' || path[n] == '/');
}

static void reply_json(struct http_response *resp, int code, cJSON *o)
{
    resp->status = code;
    resp->content_type = "application/json";
    CHECK(json_print(o, &resp->body) == 0);
    cJSON_Delete(o);
}

static void reply_unavailable(struct http_response *resp)
{
    http_response_header(resp, "Retry-After", "1");
    reply_json(resp, 503,
               api_status_failure(503, "ServiceUnavailable",
                                  "this koord manager is not the leader; the metrics.k8s.io API "
                                  "is served by the leader only",
                                  NULL));
}

static void reply_discovery(struct http_response *resp)
{
    static const char doc[] =
        "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":\"" METRICSK8S_GROUP
        "/" METRICSK8S_VERSION "\",\"resources\":["
        "{\"name\":\"nodes\",\"singularName\":\"\",\"namespaced\":false,\"kind\":\"NodeMetrics\","
        "\"verbs\":[\"get\",\"list\"]},"
        "{\"name\":\"pods\",\"singularName\":\"\",\"namespaced\":true,\"kind\":\"PodMetrics\","
        "\"verbs\":[\"get\",\"list\"]}]}";

    resp->status = 200;
    resp->content_type = "application/json";
    strbuf_addstr(&resp->body, doc);
}

static cJSON *new_list(const char *kind)
{
    cJSON *l = cJSON_CreateObject();

    CHECK(l);
    CHECK(cJSON_AddStringToObject(l, "kind", kind));
    CHECK(cJSON_AddStringToObject(l, "apiVersion", METRICSK8S_GROUP "/" METRICSK8S_VERSION));
    CHECK(cJSON_AddObjectToObject(l, "metadata"));
    CHECK(cJSON_AddArrayToObject(l, "items"));
    return l;
}

static int64_t now_seconds(void)
{
    return (int64_t)time(NULL);
}

/* One list in the making: what to keep and where. */
struct lister {
    struct metricsk8s_server *s;
    const struct metricsk8s_selectors *sel;
    const char *ns; /* pods: "" = all namespaces */
    int64_t now_s;
    cJSON *items;
};

static struct kube_object *lookup_pod(struct metricsk8s_server *s, const char *ns, const char *name)
{
    struct strbuf key = STRBUF_INIT;
    struct kube_object *o;

    strbuf_addf(&key, "%s/%s", ns, name);
    o = s->o.lookup.pod(s->o.lookup.userdata, key.buf);
    strbuf_release(&key);
    return o;
}

static int list_node(void *userdata, const char *node, const cJSON *top)
{
    struct lister *l = userdata;
    struct kube_object *obj = l->s->o.lookup.node(l->s->o.lookup.userdata, node);
    cJSON *m;

    if (obj && metricsk8s_selected(l->sel, kube_object_json(obj)) &&
        (m = metricsk8s_node_metrics(top, kube_object_json(obj), l->now_s)))
        CHECK(cJSON_AddItemToArray(l->items, m));
    kube_object_unref(obj);
    return 0;
}

/* The PodMetrics of the entry of node's report when its pod exists, is bound to node and passes
 * the selectors (sel may be NULL); else NULL. */
static cJSON *pod_of_entry(struct metricsk8s_server *s, const char *node, const cJSON *top,
                           const cJSON *entry, const struct metricsk8s_selectors *sel,
                           int64_t now_s)
{
    const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(entry, "namespace"));
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(entry, "name"));
    struct kube_object *obj;
    cJSON *m = NULL;

    if (!ns || !name || !(obj = lookup_pod(s, ns, name)))
        return NULL;
    if (!strcmp(kube_object_node_name(obj), node) &&
        (!sel || metricsk8s_selected(sel, kube_object_json(obj))))
        m = metricsk8s_pod_metrics(top, entry, kube_object_json(obj), now_s);
    kube_object_unref(obj);
    return m;
}

static int list_pods_of_node(void *userdata, const char *node, const cJSON *top)
{
    struct lister *l = userdata;
    const cJSON *entry, *pods = cJSON_GetObjectItemCaseSensitive(
                            cJSON_GetObjectItemCaseSensitive(top, "status"), "podsMetric");
    int64_t ts, window;

    if (metricsk8s_report_time(top, l->now_s, &ts, &window) < 0)
        return 0;
    cJSON_ArrayForEach(entry, pods)
    {
        const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(entry, "namespace"));
        cJSON *m;
        if (*l->ns && (!ns || strcmp(ns, l->ns)))
            continue;
        if ((m = pod_of_entry(l->s, node, top, entry, l->sel, l->now_s)))
            CHECK(cJSON_AddItemToArray(l->items, m));
    }
    return 0;
}

static const char *meta_string(const cJSON *o, const char *key)
{
    const char *v = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"), key));
    return v ? v : "";
}

static int cmp_items(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    int r = strcmp(meta_string(x, "namespace"), meta_string(y, "namespace"));

    return r ? r : strcmp(meta_string(x, "name"), meta_string(y, "name"));
}

/* Pods in namespace/name order, as kube-apiserver lists (they arrive in node order). */
static void sort_items(cJSON *items)
{
    size_t n = (size_t)cJSON_GetArraySize(items), i = 0;
    cJSON **v, *it;

    if (n < 2)
        return;
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    v = xcalloc(n, sizeof(*v));
    while ((it = cJSON_DetachItemFromArray(items, 0)))
        v[i++] = it;
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    qsort(v, n, sizeof(*v), cmp_items);
    for (i = 0; i < n; i++)
        CHECK(cJSON_AddItemToArray(items, v[i]));
    free(v);
}

/* ---- Table output (kubectl get nodes.metrics.k8s.io) ---- */

/* Whether the client asked for a meta.k8s.io Table, as kubectl get does. */
static bool wants_table(const struct http_request *req)
{
    const char *a = http_request_header(req, "Accept");

    return a && strstr(a, "as=Table") && strstr(a, "g=meta.k8s.io");
}

static void add_column(cJSON *defs, const char *name, const char *format, const char *desc)
{
    cJSON *c = cJSON_CreateObject();

    CHECK(c && cJSON_AddItemToArray(defs, c));
    CHECK(cJSON_AddStringToObject(c, "name", name));
    CHECK(cJSON_AddStringToObject(c, "type", "string"));
    CHECK(cJSON_AddStringToObject(c, "format", format));
    CHECK(cJSON_AddStringToObject(c, "description", desc));
    CHECK(cJSON_AddNumberToObject(c, "priority", 0));
}

/* A metrics object's cpu and memory: its usage, or its containers' summed. */
static void usage_of(const cJSON *m, int64_t *cpu_n, int64_t *mem)
{
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(m, "usage"), *c;
    int64_t cc, cm;

    *cpu_n = *mem = 0;
    if (u) {
        (void)read_usage(u, cpu_n, mem);
        return;
    }
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(m, "containers"))
    {
        if (read_usage(cJSON_GetObjectItemCaseSensitive(c, "usage"), &cc, &cm)) {
            *cpu_n += cc;
            *mem += cm;
        }
    }
}

/* metrics-server's Table: Name, cpu, memory (pods: summed over containers), Window; each row's
 * object the whole metrics object. items is a list's items or one object; consumed. */
static cJSON *to_table(cJSON *items)
{
    cJSON *t = cJSON_CreateObject(), *defs, *rows, *m;
    cJSON *one = cJSON_IsArray(items) ? NULL : items;

    CHECK(t);
    CHECK(cJSON_AddStringToObject(t, "kind", "Table"));
    CHECK(cJSON_AddStringToObject(t, "apiVersion", "meta.k8s.io/v1"));
    CHECK(cJSON_AddObjectToObject(t, "metadata"));
    CHECK(defs = cJSON_AddArrayToObject(t, "columnDefinitions"));
    add_column(defs, "Name", "name", "Name of the resource");
    add_column(defs, "cpu", "quantity", "CPU usage");
    add_column(defs, "memory", "quantity", "Memory usage");
    add_column(defs, "Window", "duration", "Window over which the usage was averaged");
    CHECK(rows = cJSON_AddArrayToObject(t, "rows"));
    if (one) {
        items = cJSON_CreateArray();
        CHECK(items && cJSON_AddItemToArray(items, one));
    }
    while ((m = cJSON_DetachItemFromArray(items, 0))) {
        cJSON *row = cJSON_CreateObject(), *cells;
        int64_t cpu, mem;
        cJSON *u;
        CHECK(row && cJSON_AddItemToArray(rows, row));
        CHECK(cells = cJSON_AddArrayToObject(row, "cells"));
        CHECK(cJSON_AddItemToArray(cells, cJSON_CreateString(meta_string(m, "name"))));
        usage_of(m, &cpu, &mem);
        u = usage_object(cpu, mem);
        CHECK(cJSON_AddItemToArray(
            cells, cJSON_CreateString(cJSON_GetStringValue(cJSON_GetObjectItem(u, "cpu")))));
        CHECK(cJSON_AddItemToArray(
            cells, cJSON_CreateString(cJSON_GetStringValue(cJSON_GetObjectItem(u, "memory")))));
        cJSON_Delete(u);
        CHECK(cJSON_AddItemToArray(
            cells, cJSON_CreateString(cJSON_GetStringValue(cJSON_GetObjectItem(m, "window")))));
        CHECK(cJSON_AddItemToObject(row, "object", m));
    }
    cJSON_Delete(items);
    return t;
}

/* GET of one node's or pod's metrics: 200, 404 or 503. */
static void get_one(struct metricsk8s_server *s, const struct http_request *req,
                    const struct api_reqinfo *ri, struct http_response *resp)
{
    bool pods = !strcmp(ri->resource, "pods");
    const char *node = ri->name;
    struct kube_object *obj = NULL;
    cJSON *top = NULL, *m = NULL;
    int r = 0;

    if (pods) {
        obj = lookup_pod(s, ri->namespace, ri->name);
        node = obj ? kube_object_node_name(obj) : "";
    } else {
        obj = s->o.lookup.node(s->o.lookup.userdata, ri->name);
    }
    if (obj && *node)
        r = nodemetric_server_get_top(s->o.nodemetrics, node, &top);
    if (r == -EAGAIN) {
        reply_unavailable(resp);
    } else {
        if (top && !pods) {
            m = metricsk8s_node_metrics(top, kube_object_json(obj), now_seconds());
        } else if (top) {
            const cJSON *entry;
            cJSON_ArrayForEach(entry,
                               cJSON_GetObjectItemCaseSensitive(
                                   cJSON_GetObjectItemCaseSensitive(top, "status"), "podsMetric"))
            {
                const char *ns =
                    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(entry, "namespace"));
                const char *name =
                    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(entry, "name"));
                if (ns && name && !strcmp(ns, ri->namespace) && !strcmp(name, ri->name)) {
                    m = pod_of_entry(s, node, top, entry, NULL, now_seconds());
                    break;
                }
            }
        }
        if (m)
            reply_json(resp, 200, wants_table(req) ? to_table(m) : m);
        else
            reply_json(resp, 404,
                       api_status_not_found(&(struct api_status_target){
                           METRICSK8S_GROUP, pods ? "pods" : "nodes", ri->name}));
    }
    cJSON_Delete(top);
    kube_object_unref(obj);
}

static void list(struct metricsk8s_server *s, const struct http_request *req,
                 const struct api_reqinfo *ri, struct http_response *resp)
{
    bool pods = !strcmp(ri->resource, "pods");
    const char *ls = http_request_query(req, "labelSelector");
    const char *fs = http_request_query(req, "fieldSelector");
    struct metricsk8s_selectors sel = {0};
    struct strbuf err = STRBUF_INIT;
    struct lister l = {.s = s, .sel = &sel, .ns = ri->namespace, .now_s = now_seconds()};
    cJSON *out;
    int r;

    if (metricsk8s_selectors_parse(ls, fs, pods, &sel, &err) < 0)
        goto bad;
    out = new_list(pods ? "PodMetricsList" : "NodeMetricsList");
    l.items = cJSON_GetObjectItemCaseSensitive(out, "items");
    r = nodemetric_server_each_top(s->o.nodemetrics, pods ? list_pods_of_node : list_node, &l);
    if (r == -EAGAIN) {
        cJSON_Delete(out);
        reply_unavailable(resp);
    } else if (r < 0) {
        cJSON_Delete(out);
        reply_json(resp, 500, api_status_from_errno(r, "cannot read the NodeMetric store", NULL));
    } else {
        sort_items(l.items);
        if (wants_table(req)) {
            cJSON *items = cJSON_DetachItemFromObjectCaseSensitive(out, "items");
            cJSON_Delete(out);
            out = to_table(items);
        }
        reply_json(resp, 200, out);
    }
    goto out;
bad:
    reply_json(resp, 400, api_status_failure(400, "BadRequest", err.buf, NULL));
out:
    metricsk8s_selectors_release(&sel);
    strbuf_release(&err);
}

/* Authentication and authorization as the NodeMetric API (nodemetric/auth.h): false when the
 * reply (401 or 403) is made. */
static bool admit(struct metricsk8s_server *s, const struct http_request *req,
                  const struct api_reqinfo *ri, struct http_response *resp)
{
    const struct apiserver_auth *a = s->o.auth;
    struct api_user u = {0};
    struct strbuf why = STRBUF_INIT, msg = STRBUF_INIT;
    bool ok = true;

    if (!a)
        return true;
    if (a->authenticate(a->userdata, req, &u) < 0) {
        reply_json(resp, 401, api_status_failure(401, "Unauthorized", "Unauthorized", NULL));
        return false;
    }
    if (ri->is_resource && a->authorize && a->authorize(a->userdata, &u, ri, &why) < 0) {
        api_authz_forbidden_message(u.name, ri, ri->name, why.len ? why.buf : NULL, &msg);
        reply_json(
            resp, 403,
            api_status_failure(403, "Forbidden", msg.buf,
                               &(struct api_status_target){ri->group, ri->resource, ri->name}));
        ok = false;
    }
    if (a->release)
        a->release(a->userdata, &u);
    strbuf_release(&why);
    strbuf_release(&msg);
    return ok;
}

void metricsk8s_server_handle(const struct http_request *req, struct http_response *resp,
                              void *userdata)
{
    struct metricsk8s_server *s = userdata;
    const char *method = http_request_method(req), *path = http_request_path(req);
    struct api_reqinfo ri;
    bool known;

    if (!nodemetric_server_active(s->o.nodemetrics)) {
        reply_unavailable(resp);
        return;
    }
    if (api_reqinfo_parse(method, path, http_request_query(req, "watch"),
                          http_request_query(req, "fieldSelector"), &ri) < 0) {
        reply_json(resp, 400, api_status_failure(400, "BadRequest", "malformed path", NULL));
        return;
    }
    if (!admit(s, req, &ri, resp))
        goto out;
    known = !strcmp(path, METRICSK8S_PREFIX) || !strcmp(path, METRICSK8S_PREFIX "/") ||
            (ri.is_resource && !*ri.subresource &&
             ((!strcmp(ri.resource, "nodes") && !*ri.namespace) ||
              (!strcmp(ri.resource, "pods") && (*ri.namespace || !strcmp(ri.verb, "list")))));
    if (!known) {
        reply_json(resp, 404,
                   api_status_failure(404, "NotFound",
                                      "the server could not find "
                                      "the requested resource",
                                      NULL));
    } else if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
        reply_json(resp, 405,
                   api_status_failure(405, "MethodNotAllowed",
                                      "the server does not allow this method on the requested "
                                      "resource",
                                      NULL));
    } else if (!ri.is_resource) {
        reply_discovery(resp);
    } else if (!strcmp(ri.verb, "watch")) {
        reply_json(resp, 405,
                   api_status_failure(405, "MethodNotAllowed",
                                      "metrics.k8s.io does not serve "
                                      "watches",
                                      NULL));
    } else if (!strcmp(ri.verb, "get")) {
        get_one(s, req, &ri, resp);
    } else {
        list(s, req, &ri, resp);
    }
out:
    api_reqinfo_release(&ri);
}
