/* Statuses and the per-cycle state (framework/interface.go Status, framework/cycle_state.go). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hmap.h"
#include "base/strbuf.h"
#include "sched/framework/framework.h"

static const char *const code_names[] = {
    "Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Wait", "Skip", "Pending",
};

const char *sched_code_name(enum sched_code c)
{
    if ((unsigned)c < sizeof(code_names) / sizeof(code_names[0]))
        return code_names[c];
    return "Unknown";
}

static void status_vadd(struct sched_status *s, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
static void status_vadd(struct sched_status *s, const char *fmt, va_list ap)
{
    va_list aq;
    int n;

    va_copy(aq, ap);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_copy initialised aq */
    n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (n < 0)
        n = 0;
    s->buf = xrealloc(s->buf, s->len + (size_t)n + 1);
    (void)vsnprintf(s->buf + s->len, (size_t)n + 1, fmt, ap);
    s->len += (size_t)n + 1;
    s->n++;
}

void sched_status_add(struct sched_status *s, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    status_vadd(s, fmt, ap);
    va_end(ap);
}

enum sched_code sched_status_set(struct sched_status *s, enum sched_code code, const char *fmt, ...)
{
    va_list ap;

    s->code = code;
    va_start(ap, fmt);
    status_vadd(s, fmt, ap);
    va_end(ap);
    return code;
}

const char *sched_status_reason(const struct sched_status *s, unsigned i)
{
    const char *p = s->buf;

    if (i >= s->n)
        return "";
    while (i--)
        p += strlen(p) + 1;
    return p;
}

void sched_status_message(const struct sched_status *s, struct strbuf *out)
{
    const char *p = s->buf;

    for (unsigned i = 0; i < s->n; i++) {
        if (i)
            strbuf_addstr(out, ", ");
        strbuf_addstr(out, p);
        p += strlen(p) + 1;
    }
}

void sched_status_move(struct sched_status *dst, struct sched_status *src)
{
    sched_status_release(dst);
    *dst = *src;
    memset(src, 0, sizeof(*src));
}

void sched_status_release(struct sched_status *s)
{
    if (s->buf) /* the usual status, Success with no reason, has none */
        free(s->buf);
    memset(s, 0, sizeof(*s));
}

/* ---- cycle state ---- */

struct cycle_entry {
    const struct sched_state_type *type;
    void *data;
    bool shared; /* borrowed from the state this one was cloned from */
};

struct sched_cycle {
    struct cycle_entry *v;
    size_t n, cap;
    uint64_t skip_filter, skip_score; /* registry-id bits */
    bool sampled;
    struct hmap *overrides;  /* node name -> struct sched_node_info * (sched_cycle_override_node) */
    bool overrides_borrowed; /* a clone's: the original frees them */
};

static void overrides_free(struct hmap *m)
{
    struct hmap_entry *e;
    size_t it;

    if (!m)
        return;
    for (e = hmap_first(m, &it); e; e = hmap_next(m, e, &it))
        sched_node_info_free(e->value);
    hmap_release(m);
    free(m);
}

void sched_cycle_override_node(struct sched_cycle *cs, struct sched_node_info *ni)
{
    struct sched_node_info *old;

    CHECK(!cs->overrides_borrowed);
    ni->generation = 0;
    if (!cs->overrides) {
        cs->overrides = xcalloc(1, sizeof(*cs->overrides));
        hmap_init(cs->overrides);
    }
    old = hmap_get(cs->overrides, ni->name);
    (void)hmap_put(cs->overrides, ni->name, ni);
    if (old && old != ni)
        sched_node_info_free(old);
}

struct sched_node_info *sched_cycle_node(const struct sched_cycle *cs, struct sched_node_info *ni)
{
    struct sched_node_info *o;

    if (!cs || !cs->overrides || !ni)
        return ni;
    o = hmap_get(cs->overrides, ni->name);
    return o ? o : ni;
}

struct sched_cycle *sched_cycle_new(void)
{
    return xcalloc(1, sizeof(struct sched_cycle));
}

void sched_cycle_free(struct sched_cycle *cs)
{
    if (!cs)
        return;
    for (size_t i = 0; i < cs->n; i++)
        if (cs->v[i].type->free && !cs->v[i].shared)
            cs->v[i].type->free(cs->v[i].data);
    free(cs->v);
    if (!cs->overrides_borrowed)
        overrides_free(cs->overrides);
    free(cs);
}

struct sched_cycle *sched_cycle_clone(const struct sched_cycle *cs)
{
    struct sched_cycle *c = sched_cycle_new();

    c->skip_filter = cs->skip_filter;
    c->skip_score = cs->skip_score;
    c->sampled = cs->sampled;
    /* Dry runs read the original's overrides; they never set their own. */
    c->overrides = cs->overrides;
    c->overrides_borrowed = cs->overrides != NULL;
    c->cap = cs->n;
    c->v = xcalloc(c->cap ? c->cap : 1, sizeof(*c->v));
    for (size_t i = 0; i < cs->n; i++) {
        const struct sched_state_type *t = cs->v[i].type;
        c->v[i].type = t;
        /* An entry without clone is read-only after PreFilter: the copy borrows it, and only
         * the original frees it (the original outlives its dry runs). */
        c->v[i].shared = !t->clone;
        c->v[i].data = t->clone ? t->clone(cs->v[i].data) : cs->v[i].data;
    }
    c->n = cs->n;
    return c;
}

void sched_cycle_write(struct sched_cycle *cs, const struct sched_state_type *type, void *data)
{
    for (size_t i = 0; i < cs->n; i++) {
        if (cs->v[i].type == type) {
            /* The same value again: ownership stays as it was (a copy writing back an entry
             * it borrows must not come to free it too). */
            if (cs->v[i].data == data)
                return;
            if (type->free && !cs->v[i].shared)
                type->free(cs->v[i].data);
            cs->v[i].data = data;
            cs->v[i].shared = false;
            return;
        }
    }
    if (cs->n == cs->cap) {
        cs->cap = cs->cap ? 2 * cs->cap : 8;
        cs->v = xrealloc(cs->v, cs->cap * sizeof(*cs->v));
    }
    cs->v[cs->n].type = type;
    cs->v[cs->n].data = data;
    cs->v[cs->n].shared = false;
    cs->n++;
}

void *sched_cycle_read(const struct sched_cycle *cs, const struct sched_state_type *type)
{
    for (size_t i = 0; i < cs->n; i++)
        if (cs->v[i].type == type)
            return cs->v[i].data;
    return NULL;
}

bool sched_cycle_skip_filter(const struct sched_cycle *cs, int plugin_id)
{
    return cs->skip_filter >> plugin_id & 1;
}

uint64_t sched_cycle_skip_filter_mask(const struct sched_cycle *cs)
{
    return cs->skip_filter;
}

bool sched_cycle_skip_score(const struct sched_cycle *cs, int plugin_id)
{
    return cs->skip_score >> plugin_id & 1;
}

void sched_cycle_set_skip_filter(struct sched_cycle *cs, int plugin_id)
{
    cs->skip_filter |= UINT64_C(1) << plugin_id;
}

void sched_cycle_set_skip_score(struct sched_cycle *cs, int plugin_id)
{
    cs->skip_score |= UINT64_C(1) << plugin_id;
}

bool sched_cycle_sampled(const struct sched_cycle *cs)
{
    return cs->sampled;
}

void sched_cycle_set_sampled(struct sched_cycle *cs)
{
    cs->sampled = true;
}
