/*
 * The dashboard's model (state.h). Rows live in a hash map by node name; the totals are a row
 * of sums kept current by subtracting a row's old values and adding its new ones. Deltas are
 * made from marks (the names of changed and removed rows, whether the pending list changed,
 * how many events and points are new), so a delta costs what changed, not the cluster's size.
 */
#include "manager/ui/state.h"

#include <stdlib.h>
#include <string.h>

#include "api/pod.h"
#include "api/quantity.h"
#include "base/base.h"
#include "base/hmap.h"

#define DEFAULT_HISTORY 360
#define BATCH_CPU       "kubernetes.io/batch-cpu"
#define BATCH_MEMORY    "kubernetes.io/batch-memory"

/* The figures of one row, and of the totals (nodes counts rows there). */
struct figures {
    int64_t cpu, memory;          /* Node allocatable */
    int64_t batch_cpu, batch_mem; /* Node allocatable batch-cpu (milli-cores), batch-memory */
    int64_t ls_cpu, ls_mem;       /* last report: system + LS pods */
    int64_t be_cpu, be_mem;       /* last report: BE pods */
    int64_t nodes;
};

struct row {
    struct figures f;
    char *reported; /* the last report's updateTime, or NULL */
    bool has_node;
};

struct pending {
    char *ns, *name, *cls, *reason, *message, *created;
};

struct point {
    int64_t t;
    struct figures f;
};

struct ui_state {
    struct hmap rows; /* node name -> struct row */
    struct figures total;
    struct hmap pending; /* "ns/name" -> struct pending */
    size_t pending_ls, pending_be;

    cJSON *events[UI_STATE_MAX_EVENTS]; /* ring, oldest at ev_head */
    size_t ev_head, ev_n;

    struct point *points; /* ring of history_max, oldest at pt_head */
    size_t history_max, pt_head, pt_n;

    /* delta marks */
    struct hmap dirty;   /* names of changed rows */
    struct hmap removed; /* names of removed rows */
    bool pending_changed, totals_changed;
    size_t new_events, new_points;
};

/* ---- helpers ---- */

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A quantity of list[k] in milli-units (milli) or units; 0 when absent or malformed. */
static int64_t qty(const cJSON *list, const char *k, bool milli)
{
    const char *s = str(list, k);
    struct quantity q;
    int64_t v = 0;

    if (!s || quantity_parse(s, &q) < 0)
        return 0;
    if ((milli ? quantity_milli(&q, &v) : quantity_value(&q, &v)) < 0)
        return 0;
    return v;
}

static void figures_add(struct figures *t, const struct figures *f, int sign)
{
    t->cpu += sign * f->cpu;
    t->memory += sign * f->memory;
    t->batch_cpu += sign * f->batch_cpu;
    t->batch_mem += sign * f->batch_mem;
    t->ls_cpu += sign * f->ls_cpu;
    t->ls_mem += sign * f->ls_mem;
    t->be_cpu += sign * f->be_cpu;
    t->be_mem += sign * f->be_mem;
    t->nodes += sign * f->nodes;
}

static bool figures_equal(const struct figures *a, const struct figures *b)
{
    return !memcmp(a, b, sizeof(*a));
}

static void figures_json(cJSON *o, const struct figures *f, bool nodes)
{
    if (nodes)
        CHECK(cJSON_AddNumberToObject(o, "nodes", (double)f->nodes));
    CHECK(cJSON_AddNumberToObject(o, "cpu", (double)f->cpu));
    CHECK(cJSON_AddNumberToObject(o, "memory", (double)f->memory));
    CHECK(cJSON_AddNumberToObject(o, "batchCpu", (double)f->batch_cpu));
    CHECK(cJSON_AddNumberToObject(o, "batchMemory", (double)f->batch_mem));
    CHECK(cJSON_AddNumberToObject(o, "lsCpu", (double)f->ls_cpu));
    CHECK(cJSON_AddNumberToObject(o, "lsMemory", (double)f->ls_mem));
    CHECK(cJSON_AddNumberToObject(o, "beCpu", (double)f->be_cpu));
    CHECK(cJSON_AddNumberToObject(o, "beMemory", (double)f->be_mem));
}

static void mark(struct hmap *set, const char *name)
{
    (void)hmap_upsert(set, name);
}

static void row_free(struct row *r)
{
    if (!r)
        return;
    free(r->reported);
    free(r);
}

static void pending_free(struct pending *p)
{
    if (!p)
        return;
    free(p->ns);
    free(p->name);
    free(p->cls);
    free(p->reason);
    free(p->message);
    free(p->created);
    free(p);
}

/* ---- lifecycle ---- */

struct ui_state *ui_state_new(size_t history)
{
    struct ui_state *st = xcalloc(1, sizeof(*st));

    hmap_init(&st->rows);
    hmap_init(&st->pending);
    hmap_init(&st->dirty);
    hmap_init(&st->removed);
    st->history_max = history ? history : DEFAULT_HISTORY;
    st->points = xcalloc(st->history_max, sizeof(*st->points));
    return st;
}

void ui_state_free(struct ui_state *st)
{
    size_t it;

    if (!st)
        return;
    for (struct hmap_entry *e = hmap_first(&st->rows, &it); e; e = hmap_next(&st->rows, e, &it))
        row_free(e->value);
    for (struct hmap_entry *e = hmap_first(&st->pending, &it); e;
         e = hmap_next(&st->pending, e, &it))
        pending_free(e->value);
    for (size_t i = 0; i < st->ev_n; i++)
        cJSON_Delete(st->events[(st->ev_head + i) % UI_STATE_MAX_EVENTS]);
    hmap_release(&st->rows);
    hmap_release(&st->pending);
    hmap_release(&st->dirty);
    hmap_release(&st->removed);
    free(st->points);
    free(st);
}

/* ---- nodes ---- */

static struct row *row_get(struct ui_state *st, const char *name)
{
    struct row *r = hmap_get(&st->rows, name);

    if (!r) {
        r = xcalloc(1, sizeof(*r));
        r->f.nodes = 1;
        st->total.nodes++;
        (void)hmap_put(&st->rows, name, r);
        (void)hmap_del(&st->removed, name);
        st->totals_changed = true;
    }
    return r;
}

/* Replaces r's figures with f, keeping the totals; true when they differ. */
static bool row_set(struct ui_state *st, struct row *r, const struct figures *f)
{
    if (figures_equal(&r->f, f))
        return false;
    figures_add(&st->total, &r->f, -1);
    r->f = *f;
    figures_add(&st->total, &r->f, 1);
    st->totals_changed = true;
    return true;
}

bool ui_state_node(struct ui_state *st, const cJSON *node)
{
    const char *name = str(get(node, "metadata"), "name");
    const cJSON *alloc = get(get(node, "status"), "allocatable");
    struct figures f;
    struct row *r;
    bool changed, added;

    if (!name || !*name)
        return false;
    added = !hmap_get(&st->rows, name);
    r = row_get(st, name);
    f = r->f;
    f.cpu = qty(alloc, "cpu", true);
    f.memory = qty(alloc, "memory", false);
    /* batch-cpu counts milli-cores in units: "3000" is three cores. */
    f.batch_cpu = qty(alloc, BATCH_CPU, false);
    f.batch_mem = qty(alloc, BATCH_MEMORY, false);
    changed = row_set(st, r, &f) || added || !r->has_node;
    r->has_node = true;
    if (changed)
        mark(&st->dirty, name);
    return changed;
}

bool ui_state_node_delete(struct ui_state *st, const char *name)
{
    struct row *r = hmap_del(&st->rows, name);

    if (!r)
        return false;
    figures_add(&st->total, &r->f, -1);
    st->totals_changed = true;
    row_free(r);
    (void)hmap_del(&st->dirty, name);
    mark(&st->removed, name);
    return true;
}

static bool is_be_priority(enum api_priority p)
{
    return p == API_PRIORITY_BATCH || p == API_PRIORITY_FREE;
}

bool ui_state_report(struct ui_state *st, const char *node, const cJSON *usage)
{
    const cJSON *status = get(usage, "status"), *pm = get(status, "podsMetric"), *p;
    const cJSON *sys = get(get(get(status, "nodeMetric"), "systemUsage"), "resources");
    const char *when = str(status, "updateTime");
    struct figures f;
    struct row *r;
    bool changed, added;

    if (!node || !*node)
        return false;
    added = !hmap_get(&st->rows, node);
    r = row_get(st, node);
    f = r->f;
    f.ls_cpu = qty(sys, "cpu", true);
    f.ls_mem = qty(sys, "memory", false);
    f.be_cpu = f.be_mem = 0;
    if (!cJSON_IsArray(pm))
        pm = NULL;
    cJSON_ArrayForEach(p, pm)
    {
        const cJSON *res = get(get(p, "podUsage"), "resources");
        if (is_be_priority(api_priority_by_name(str(p, "priority")))) {
            f.be_cpu += qty(res, "cpu", true);
            f.be_mem += qty(res, "memory", false);
        } else {
            f.ls_cpu += qty(res, "cpu", true);
            f.ls_mem += qty(res, "memory", false);
        }
    }
    changed = row_set(st, r, &f) || added;
    if (when && (!r->reported || strcmp(r->reported, when))) {
        free(r->reported);
        r->reported = xstrdup(when);
        changed = true;
    }
    if (changed)
        mark(&st->dirty, node);
    return changed;
}

/* ---- pods ---- */

static char *dup_or_empty(const char *s)
{
    return xstrdup(s ? s : "");
}

/* Waiting to be scheduled: not bound, not finished, not being deleted. */
static bool is_pending(const cJSON *pod)
{
    const char *phase = str(get(pod, "status"), "phase");
    const char *node = str(get(pod, "spec"), "nodeName");

    if (node && *node)
        return false;
    if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
        return false;
    return !get(get(pod, "metadata"), "deletionTimestamp");
}

static bool str_eq(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

static void pending_count(struct ui_state *st, const struct pending *p, int sign)
{
    if (!strcmp(p->cls, "BE"))
        st->pending_be += (size_t)sign;
    else
        st->pending_ls += (size_t)sign;
}

bool ui_state_pod(struct ui_state *st, const cJSON *pod)
{
    const cJSON *meta = get(pod, "metadata"), *c, *cond = NULL;
    const char *ns = str(meta, "namespace"), *name = str(meta, "name");
    struct pending *old, *p;
    char key[512];

    if (!ns || !name)
        return false;
    (void)snprintf(key, sizeof(key), "%s/%s", ns, name);
    if (!is_pending(pod))
        return ui_state_pod_delete(st, key);
    cJSON_ArrayForEach(c, get(get(pod, "status"), "conditions"))
    {
        if (str_eq(str(c, "type"), "PodScheduled") && str_eq(str(c, "status"), "False"))
            cond = c;
    }
    p = xcalloc(1, sizeof(*p));
    p->ns = xstrdup(ns);
    p->name = xstrdup(name);
    p->cls = xstrdup(
        api_pod_qos(pod) == API_QOS_BE || is_be_priority(api_pod_priority(pod)) ? "BE" : "LS");
    p->reason = dup_or_empty(str(cond, "reason"));
    p->message = dup_or_empty(str(cond, "message"));
    p->created = dup_or_empty(str(meta, "creationTimestamp"));
    old = hmap_get(&st->pending, key);
    if (old && !strcmp(old->cls, p->cls) && !strcmp(old->reason, p->reason) &&
        !strcmp(old->message, p->message)) {
        pending_free(p);
        return false;
    }
    if (old)
        pending_count(st, old, -1);
    pending_free(hmap_put(&st->pending, key, p));
    pending_count(st, p, 1);
    st->pending_changed = true;
    return true;
}

bool ui_state_pod_delete(struct ui_state *st, const char *key)
{
    struct pending *p = hmap_del(&st->pending, key);

    if (!p)
        return false;
    pending_count(st, p, -1);
    pending_free(p);
    st->pending_changed = true;
    return true;
}

/* ---- events ---- */

bool ui_state_event(struct ui_state *st, const cJSON *ev)
{
    const char *reason = str(ev, "reason");
    const cJSON *obj = get(ev, "involvedObject");
    const char *when = str(ev, "lastTimestamp"), *kind;
    char object[512];
    cJSON *e;

    if (!str_eq(str(get(ev, "source"), "component"), UI_EVENT_SOURCE) || !reason)
        return false;
    if (!strcmp(reason, UI_EVENT_EVICTION))
        kind = "eviction";
    else if (!strcmp(reason, UI_EVENT_SUPPRESSION))
        kind = "suppression";
    else
        return false;
    if (!when || !*when)
        when = str(ev, "eventTime");
    if (!when || !*when)
        when = str(ev, "firstTimestamp");
    if (!when || !*when)
        when = str(get(ev, "metadata"), "creationTimestamp");
    if (str(obj, "namespace") && *str(obj, "namespace"))
        (void)snprintf(object, sizeof(object), "%s/%s", str(obj, "namespace"),
                       str(obj, "name") ? str(obj, "name") : "");
    else
        (void)snprintf(object, sizeof(object), "%s", str(obj, "name") ? str(obj, "name") : "");
    CHECK(e = cJSON_CreateObject());
    CHECK(cJSON_AddStringToObject(e, "time", when ? when : ""));
    CHECK(cJSON_AddStringToObject(e, "kind", kind));
    CHECK(cJSON_AddStringToObject(e, "reason", reason));
    CHECK(cJSON_AddStringToObject(e, "objectKind", str(obj, "kind") ? str(obj, "kind") : ""));
    CHECK(cJSON_AddStringToObject(e, "object", object));
    CHECK(cJSON_AddStringToObject(e, "message", str(ev, "message") ? str(ev, "message") : ""));
    if (st->ev_n == UI_STATE_MAX_EVENTS) {
        cJSON_Delete(st->events[st->ev_head]);
        st->events[st->ev_head] = e;
        st->ev_head = (st->ev_head + 1) % UI_STATE_MAX_EVENTS;
    } else {
        st->events[(st->ev_head + st->ev_n) % UI_STATE_MAX_EVENTS] = e;
        st->ev_n++;
    }
    if (st->new_events < UI_STATE_MAX_EVENTS)
        st->new_events++;
    return true;
}

/* ---- history ---- */

size_t ui_state_nodes(const struct ui_state *st)
{
    return st->rows.n;
}

bool ui_state_has_capacity(const struct ui_state *st)
{
    return st->total.cpu > 0;
}

void ui_state_point(struct ui_state *st, int64_t unix_ms)
{
    struct point *p;

    if (st->pt_n == st->history_max) {
        p = &st->points[st->pt_head];
        st->pt_head = (st->pt_head + 1) % st->history_max;
    } else {
        p = &st->points[(st->pt_head + st->pt_n) % st->history_max];
        st->pt_n++;
    }
    p->t = unix_ms;
    p->f = st->total;
    if (st->new_points < st->history_max)
        st->new_points++;
}

/* The last n points as columns: {"t": [seconds...], "cpu": [...], ...}. */
static cJSON *points_json(const struct ui_state *st, size_t n)
{
    static const char *const names[] = {"t",     "cpu",      "memory", "batchCpu", "batchMemory",
                                        "lsCpu", "lsMemory", "beCpu",  "beMemory"};
    cJSON *o, *cols[sizeof(names) / sizeof(names[0])];

    CHECK(o = cJSON_CreateObject());
    for (size_t c = 0; c < sizeof(names) / sizeof(names[0]); c++) {
        CHECK(cols[c] = cJSON_AddArrayToObject(o, names[c]));
    }
    for (size_t i = st->pt_n - n; i < st->pt_n; i++) {
        const struct point *p = &st->points[(st->pt_head + i) % st->history_max];
        const int64_t v[] = {p->t / 1000, p->f.cpu,    p->f.memory, p->f.batch_cpu, p->f.batch_mem,
                             p->f.ls_cpu, p->f.ls_mem, p->f.be_cpu, p->f.be_mem};
        for (size_t c = 0; c < sizeof(names) / sizeof(names[0]); c++)
            CHECK(cJSON_AddItemToArray(cols[c], cJSON_CreateNumber((double)v[c])));
    }
    return o;
}

/* ---- rendering ---- */

static cJSON *row_json(const char *name, const struct row *r)
{
    cJSON *o;

    CHECK(o = cJSON_CreateObject());
    CHECK(cJSON_AddStringToObject(o, "name", name));
    figures_json(o, &r->f, false);
    if (r->reported)
        CHECK(cJSON_AddStringToObject(o, "reported", r->reported));
    else
        CHECK(cJSON_AddNullToObject(o, "reported"));
    return o;
}

static int cmp_entry_key(const void *a, const void *b)
{
    return strcmp((*(struct hmap_entry *const *)a)->key, (*(struct hmap_entry *const *)b)->key);
}

/* The entries of m sorted by key (an array to free). */
static struct hmap_entry **sorted(const struct hmap *m)
{
    struct hmap_entry **v = xcalloc(m->n ? m->n : 1, sizeof(struct hmap_entry *));
    size_t it, n = 0;

    for (struct hmap_entry *e = hmap_first(m, &it); e; e = hmap_next(m, e, &it))
        v[n++] = e;
    qsort(v, n, sizeof(struct hmap_entry *), cmp_entry_key);
    return v;
}

static int cmp_pending(const void *a, const void *b)
{
    const struct pending *x = (*(struct hmap_entry *const *)a)->value;
    const struct pending *y = (*(struct hmap_entry *const *)b)->value;
    int c = strcmp(x->created, y->created);

    return c ? c : cmp_entry_key(a, b);
}

static cJSON *pending_json(const struct ui_state *st)
{
    struct hmap_entry **v = sorted(&st->pending);
    cJSON *o, *pods;

    qsort(v, st->pending.n, sizeof(struct hmap_entry *), cmp_pending);
    CHECK(o = cJSON_CreateObject());
    CHECK(cJSON_AddNumberToObject(o, "LS", (double)st->pending_ls));
    CHECK(cJSON_AddNumberToObject(o, "BE", (double)st->pending_be));
    CHECK(pods = cJSON_AddArrayToObject(o, "pods"));
    for (size_t i = 0; i < st->pending.n && i < UI_STATE_MAX_PENDING_SHOWN; i++) {
        const struct pending *p = v[i]->value;
        cJSON *j;
        CHECK(j = cJSON_CreateObject());
        CHECK(cJSON_AddStringToObject(j, "namespace", p->ns));
        CHECK(cJSON_AddStringToObject(j, "name", p->name));
        CHECK(cJSON_AddStringToObject(j, "class", p->cls));
        CHECK(cJSON_AddStringToObject(j, "reason", p->reason));
        CHECK(cJSON_AddStringToObject(j, "message", p->message));
        CHECK(cJSON_AddStringToObject(j, "created", p->created));
        CHECK(cJSON_AddItemToArray(pods, j));
    }
    free(v);
    return o;
}

/* The newest n events, newest first. */
static cJSON *events_json(const struct ui_state *st, size_t n)
{
    cJSON *a;

    CHECK(a = cJSON_CreateArray());
    for (size_t i = 0; i < n && i < st->ev_n; i++) {
        const cJSON *e = st->events[(st->ev_head + st->ev_n - 1 - i) % UI_STATE_MAX_EVENTS];
        CHECK(cJSON_AddItemToArray(a, cJSON_Duplicate(e, true)));
    }
    return a;
}

cJSON *ui_state_snapshot(const struct ui_state *st)
{
    struct hmap_entry **v = sorted(&st->rows);
    cJSON *o, *nodes, *totals;

    CHECK(o = cJSON_CreateObject());
    CHECK(nodes = cJSON_AddArrayToObject(o, "nodes"));
    for (size_t i = 0; i < st->rows.n; i++)
        CHECK(cJSON_AddItemToArray(nodes, row_json(v[i]->key, v[i]->value)));
    free(v);
    CHECK(totals = cJSON_AddObjectToObject(o, "totals"));
    figures_json(totals, &st->total, true);
    CHECK(cJSON_AddItemToObject(o, "history", points_json(st, st->pt_n)));
    CHECK(cJSON_AddItemToObject(o, "pending", pending_json(st)));
    CHECK(cJSON_AddItemToObject(o, "events", events_json(st, st->ev_n)));
    return o;
}

bool ui_state_changed(const struct ui_state *st)
{
    return st->dirty.n || st->removed.n || st->pending_changed || st->totals_changed ||
           st->new_events || st->new_points;
}

static void clear_set(struct hmap *m)
{
    hmap_release(m);
    hmap_init(m);
}

cJSON *ui_state_delta(struct ui_state *st)
{
    cJSON *o;

    if (!ui_state_changed(st))
        return NULL;
    CHECK(o = cJSON_CreateObject());
    if (st->dirty.n) {
        struct hmap_entry **v = sorted(&st->dirty);
        cJSON *nodes;
        CHECK(nodes = cJSON_AddArrayToObject(o, "nodes"));
        for (size_t i = 0; i < st->dirty.n; i++) {
            const struct row *r = hmap_get(&st->rows, v[i]->key);
            if (r)
                CHECK(cJSON_AddItemToArray(nodes, row_json(v[i]->key, r)));
        }
        free(v);
    }
    if (st->removed.n) {
        struct hmap_entry **v = sorted(&st->removed);
        cJSON *removed;
        CHECK(removed = cJSON_AddArrayToObject(o, "removed"));
        for (size_t i = 0; i < st->removed.n; i++)
            CHECK(cJSON_AddItemToArray(removed, cJSON_CreateString(v[i]->key)));
        free(v);
    }
    if (st->totals_changed) {
        cJSON *totals;
        CHECK(totals = cJSON_AddObjectToObject(o, "totals"));
        figures_json(totals, &st->total, true);
    }
    if (st->new_points)
        CHECK(cJSON_AddItemToObject(o, "point", points_json(st, st->new_points)));
    if (st->pending_changed)
        CHECK(cJSON_AddItemToObject(o, "pending", pending_json(st)));
    if (st->new_events)
        CHECK(cJSON_AddItemToObject(o, "events", events_json(st, st->new_events)));
    clear_set(&st->dirty);
    clear_set(&st->removed);
    st->pending_changed = st->totals_changed = false;
    st->new_events = st->new_points = 0;
    return o;
}
