/*
 * The openb trace readers (trace.h). The files are plain CSV without quoting (the published
 * ones never quote), so a line is split at every comma; a field that needs a comma cannot be
 * expressed, and none of the columns is free text.
 */
#include "sim/trace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"

#define NODE_HEADER "sn,cpu_milli,memory_mib,gpu,model"
#define POD_HEADER                                                                                 \
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"            \
    "deletion_time,scheduled_time"
#define NODE_COLS   5
#define POD_COLS    11
#define MAX_COLS    11
#define MAX_NAME    253
#define MAX_FILE    (256u << 20)
#define MIB         (INT64_C(1024) * 1024)
#define MAX_MILLI   (INT64_C(1) << 40) /* a billion cores: anything larger is a typo */
#define MAX_MIB     (INT64_C(1) << 30) /* a pebibyte */
#define MAX_SECONDS (INT64_C(1) << 40)

/* One field of a line: where it starts (column, from 1) and its text (not terminated). */
struct field {
    const char *p;
    size_t len;
    size_t col;
};

/* A line cursor over text: the current line and its number. */
struct lines {
    const char *name;
    const char *p, *end;
    size_t lineno;
    struct strbuf *err;
};

/* The next line (without "\n" or "\r\n") into *ret and *ret_len; false at the end. */
static bool next_line(struct lines *l, const char **ret, size_t *ret_len)
{
    const char *nl;
    size_t n;

    if (l->p >= l->end)
        return false;
    nl = memchr(l->p, '\n', (size_t)(l->end - l->p));
    n = nl ? (size_t)(nl - l->p) : (size_t)(l->end - l->p);
    *ret = l->p;
    *ret_len = n && l->p[n - 1] == '\r' ? n - 1 : n;
    l->p += n + (nl ? 1 : 0);
    l->lineno++;
    return true;
}

static int fail(struct lines *l, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "name:line:col: message" into the error buffer; -EINVAL. */
static int fail(struct lines *l, size_t col, const char *fmt, ...)
{
    va_list ap;

    if (l->err) {
        strbuf_reset(l->err);
        strbuf_addf(l->err, "%s:%zu:%zu: ", l->name, l->lineno, col);
        va_start(ap, fmt);
        strbuf_vaddf(l->err, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

/* Splits line at commas into exactly want fields. */
static int split(struct lines *l, const char *line, size_t len, struct field *f, size_t want)
{
    size_t n = 0, start = 0;

    for (size_t i = 0; i <= len; i++) {
        if (i < len && line[i] != ',')
            continue;
        if (n == want) {
            return fail(l, start + 1, "more than %zu columns", want);
        }
        f[n++] = (struct field){.p = line + start, .len = i - start, .col = start + 1};
        start = i + 1;
    }
    if (n != want) {
        return fail(l, len + 1, "%zu columns, want %zu", n, want);
    }
    return 0;
}

/* A whole non-negative integer of at most max. */
static int field_int(struct lines *l, const struct field *f, const char *what, int64_t max,
                     int64_t *ret)
{
    char buf[32];
    int64_t v;

    if (!f->len)
        return fail(l, f->col, "%s is empty", what);
    if (f->len >= sizeof(buf))
        return fail(l, f->col, "%s is not a whole number", what);
    memcpy(buf, f->p, f->len);
    buf[f->len] = '\0';
    if (buf[0] == '-' || buf[0] == '+' || parse_i64(buf, &v) < 0 || v < 0 || v > max) {
        if (l->err) {
            strbuf_reset(l->err);
            strbuf_addf(l->err, "%s:%zu:%zu: %s must be a whole number from 0 to %lld, not \"%s\"",
                        l->name, l->lineno, f->col, what, (long long)max, buf);
        }
        return -EINVAL;
    }
    *ret = v;
    return 0;
}

/* A Kubernetes object name: a DNS subdomain (lower-case alphanumerics, '-', '.'). */
static int field_name(struct lines *l, const struct field *f, const char *what)
{
    if (!f->len || f->len > MAX_NAME)
        return fail(l, f->col, "%s must be 1 to 253 characters", what);
    for (size_t i = 0; i < f->len; i++) {
        char c = f->p[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        bool edge = i == 0 || i + 1 == f->len;
        if (!alnum && (edge || (c != '-' && c != '.')))
            return fail(l, f->col + i,
                        "%s must be lower-case letters, digits, '-' and '.', starting and "
                        "ending with a letter or digit",
                        what);
    }
    return 0;
}

static bool field_is(const struct field *f, const char *s)
{
    return f->len == strlen(s) && !memcmp(f->p, s, f->len);
}

static int header(struct lines *l, const char *want)
{
    const char *line;
    size_t len;

    if (!next_line(l, &line, &len)) {
        l->lineno = 1;
        return fail(l, 1, "empty file: the header \"%s\" is missing", want);
    }
    if (len != strlen(want) || memcmp(line, want, len))
        return fail(l, 1, "the header must be \"%s\"", want);
    return 0;
}

int sim_trace_parse_nodes(struct sim_trace *t, const char *name, const char *text, size_t len,
                          struct strbuf *err)
{
    struct lines l = {.name = name, .p = text, .end = text + len, .err = err};
    struct sim_node *v = NULL;
    size_t n = 0, alloc = 0;
    const char *line;
    size_t llen;
    int r;

    CHECK(!t->nodes);
    if ((r = header(&l, NODE_HEADER)) < 0)
        return r;
    while (next_line(&l, &line, &llen)) {
        struct field f[MAX_COLS];
        int64_t cpu, mib, gpu;

        if (!llen && l.p >= l.end)
            break; /* a final empty line */
        if ((r = split(&l, line, llen, f, NODE_COLS)) < 0 ||
            (r = field_name(&l, &f[0], "sn")) < 0 ||
            (r = field_int(&l, &f[1], "cpu_milli", MAX_MILLI, &cpu)) < 0 ||
            (r = field_int(&l, &f[2], "memory_mib", MAX_MIB, &mib)) < 0 ||
            (r = field_int(&l, &f[3], "gpu", MAX_MILLI, &gpu)) < 0)
            goto fail;
        if (!cpu || !mib) {
            r = fail(&l, f[cpu ? 2 : 1].col, "%s must be positive",
                     cpu ? "memory_mib" : "cpu_milli");
            goto fail;
        }
        if (n == SIM_TRACE_MAX_NODES) {
            r = -E2BIG;
            if (err) {
                strbuf_reset(err);
                strbuf_addf(err, "%s:%zu: more than %d nodes", name, l.lineno, SIM_TRACE_MAX_NODES);
            }
            goto fail;
        }
        if (n == alloc) {
            alloc = alloc ? alloc * 2 : 64;
            v = xrealloc(v, alloc * sizeof(*v));
        }
        v[n++] = (struct sim_node){
            .name = strndup(f[0].p, f[0].len), .cpu_milli = cpu, .memory = mib * MIB};
        CHECK(v[n - 1].name);
    }
    if (!n) {
        r = fail(&l, 1, "no nodes after the header");
        goto fail;
    }
    t->nodes = v;
    t->nnodes = n;
    return 0;
fail:
    for (size_t i = 0; i < n; i++)
        free(v[i].name);
    free(v);
    return r;
}

static int cmp_pod(const void *a, const void *b)
{
    const struct sim_pod *x = a, *y = b;

    if (x->create_s != y->create_s)
        return x->create_s < y->create_s ? -1 : 1;
    if (x->cls != y->cls) /* the services a batch job comes to find already there */
        return x->cls == SIM_LS ? -1 : 1;
    return strcmp(x->name, y->name);
}

int sim_trace_sort_pods(struct sim_pod *v, size_t n, const char *name, struct strbuf *err)
{
    qsort(v, n, sizeof(*v), cmp_pod);
    for (size_t i = 1; i < n; i++) {
        if (!strcmp(v[i - 1].name, v[i].name)) {
            if (err) {
                strbuf_reset(err);
                strbuf_addf(err, "%s: pod \"%s\" appears twice", name, v[i].name);
            }
            return -EINVAL;
        }
    }
    return 0;
}

static int pod_line(struct lines *l, const char *line, size_t llen, struct sim_pod *ret)
{
    struct field f[MAX_COLS];
    int64_t cpu = 0, mib = 0, ngpu, gpum, created = 0, deleted = -1, sched;
    int r;

    if ((r = split(l, line, llen, f, POD_COLS)) < 0 || (r = field_name(l, &f[0], "name")) < 0 ||
        (r = field_int(l, &f[1], "cpu_milli", MAX_MILLI, &cpu)) < 0 ||
        (r = field_int(l, &f[2], "memory_mib", MAX_MIB, &mib)) < 0 ||
        (r = field_int(l, &f[3], "num_gpu", MAX_MILLI, &ngpu)) < 0 ||
        (r = field_int(l, &f[4], "gpu_milli", MAX_MILLI, &gpum)) < 0 ||
        (r = field_int(l, &f[8], "creation_time", MAX_SECONDS, &created)) < 0 ||
        (f[9].len && (r = field_int(l, &f[9], "deletion_time", MAX_SECONDS, &deleted)) < 0) ||
        (f[10].len && (r = field_int(l, &f[10], "scheduled_time", MAX_SECONDS, &sched)) < 0))
        return r;
    if (field_is(&f[6], "BE"))
        ret->cls = SIM_BE;
    else if (field_is(&f[6], "LS") || field_is(&f[6], "Burstable") || field_is(&f[6], "Guaranteed"))
        ret->cls = SIM_LS;
    else
        return fail(l, f[6].col, "qos must be LS, BE, Burstable or Guaranteed, not \"%.*s\"",
                    (int)f[6].len, f[6].p);
    if (!field_is(&f[7], "Running") && !field_is(&f[7], "Succeeded") &&
        !field_is(&f[7], "Failed") && !field_is(&f[7], "Pending"))
        return fail(l, f[7].col,
                    "pod_phase must be Running, Succeeded, Failed or Pending, not \"%.*s\"",
                    (int)f[7].len, f[7].p);
    if (!cpu && !mib)
        return fail(l, f[1].col, "the pod requests neither cpu nor memory");
    if (deleted >= 0 && deleted < created)
        return fail(l, f[9].col, "deletion_time is before creation_time");
    ret->name = strndup(f[0].p, f[0].len);
    CHECK(ret->name);
    ret->cpu_milli = cpu;
    ret->memory = mib * MIB;
    ret->create_s = (double)created;
    ret->delete_s = (double)deleted;
    return 0;
}

int sim_trace_parse_pods(struct sim_trace *t, const char *name, const char *text, size_t len,
                         struct strbuf *err)
{
    struct lines l = {.name = name, .p = text, .end = text + len, .err = err};
    struct sim_pod *v = NULL;
    size_t n = 0, alloc = 0;
    double span = t->span_s;
    const char *line;
    size_t llen;
    int r;

    CHECK(!t->pods);
    if ((r = header(&l, POD_HEADER)) < 0)
        return r;
    while (next_line(&l, &line, &llen)) {
        if (!llen && l.p >= l.end)
            break;
        if (n == SIM_TRACE_MAX_PODS) {
            r = -E2BIG;
            if (err) {
                strbuf_reset(err);
                strbuf_addf(err, "%s:%zu: more than %d pods", name, l.lineno, SIM_TRACE_MAX_PODS);
            }
            goto fail;
        }
        if (n == alloc) {
            alloc = alloc ? alloc * 2 : 256;
            v = xrealloc(v, alloc * sizeof(*v));
        }
        if ((r = pod_line(&l, line, llen, &v[n])) < 0)
            goto fail;
        if (v[n].create_s > span)
            span = v[n].create_s;
        if (v[n].delete_s > span)
            span = v[n].delete_s;
        n++;
    }
    if (!n) {
        r = fail(&l, 1, "no pods after the header");
        goto fail;
    }
    if ((r = sim_trace_sort_pods(v, n, name, err)) < 0)
        goto fail;
    t->pods = v;
    t->npods = n;
    t->span_s = span;
    return 0;
fail:
    for (size_t i = 0; i < n; i++)
        free(v[i].name);
    free(v);
    return r;
}

static int read_file(const char *path, struct strbuf *text, struct strbuf *err)
{
    int r = codec_read_file(path, MAX_FILE, text);

    if (r < 0 && err) {
        strbuf_reset(err);
        strbuf_addf(err, "%s: %s", path, err_str(r));
    }
    return r;
}

int sim_trace_read_nodes(struct sim_trace *t, const char *path, struct strbuf *err)
{
    struct strbuf text = STRBUF_INIT;
    int r = read_file(path, &text, err);

    if (r >= 0)
        r = sim_trace_parse_nodes(t, path, text.buf, text.len, err);
    strbuf_release(&text);
    return r;
}

int sim_trace_read_pods(struct sim_trace *t, const char *path, struct strbuf *err)
{
    struct strbuf text = STRBUF_INIT;
    int r = read_file(path, &text, err);

    if (r >= 0)
        r = sim_trace_parse_pods(t, path, text.buf, text.len, err);
    strbuf_release(&text);
    return r;
}

int sim_trace_synthetic_nodes(struct sim_trace *t, size_t n, int64_t cpu_milli, int64_t memory,
                              struct strbuf *err)
{
    CHECK(!t->nodes);
    if (!n || n > SIM_TRACE_MAX_NODES || cpu_milli <= 0 || memory <= 0) {
        if (err) {
            strbuf_reset(err);
            strbuf_addf(err, "a synthetic fleet needs 1 to %d nodes of positive size",
                        SIM_TRACE_MAX_NODES);
        }
        return -EINVAL;
    }
    t->nodes = xcalloc(n, sizeof(*t->nodes));
    for (size_t i = 0; i < n; i++) {
        char name[32];
        (void)snprintf(name, sizeof(name), "sim-node-%05zu", i);
        t->nodes[i] =
            (struct sim_node){.name = xstrdup(name), .cpu_milli = cpu_milli, .memory = memory};
    }
    t->nnodes = n;
    return 0;
}

void sim_trace_release(struct sim_trace *t)
{
    for (size_t i = 0; i < t->nnodes; i++)
        free(t->nodes[i].name);
    for (size_t i = 0; i < t->npods; i++)
        free(t->pods[i].name);
    free(t->nodes);
    free(t->pods);
    *t = (struct sim_trace){0};
}
