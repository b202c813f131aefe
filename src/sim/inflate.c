/*
 * Workload inflation (inflate.h). The BE arrivals are a Poisson process drawn from the model's
 * hash (sim_model_uniform), so the same seed gives the same workload on any machine, and the
 * two runs of a replay get identical work.
 */
#include "sim/inflate.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "sim/model.h"
#include "sim/trace.h"

#define DRAW_ARRIVAL UINT64_C(0x696e666c) /* "infl": the arrival gaps' own stream */
#define DRAW_RUNNING UINT64_C(0x72756e6e) /* "runn": the jobs running at time 0 */

/*
 * The options' ranges, [lo, hi] or, with lo_out, (lo, hi]: the one place they are written
 * (inflate.h). range says the same in words for the errors, on the same line so that the two
 * change together.
 */
static const struct {
    size_t off;       /* the option in struct sim_inflate_opts */
    const char *name; /* in sim_trace_inflate()'s error */
    double lo, hi;
    bool lo_out;
    const char *range;
} ranges[SIM_INFLATE_NOPTS] = {
    [SIM_INFLATE_LS_FILL] = {offsetof(struct sim_inflate_opts, ls_fill), "the LS fill", 0, 1, false,
                             "a fraction in [0, 1]"},
    [SIM_INFLATE_BE_LOAD] = {offsetof(struct sim_inflate_opts, be_load), "the BE load", 0, 10,
                             false, "a number in [0, 10] (fractions of the fleet's CPU)"},
    [SIM_INFLATE_BE_STRETCH] = {offsetof(struct sim_inflate_opts, be_stretch), "the BE stretch", 0,
                                1000, true, "a number in (0, 1000]"},
    [SIM_INFLATE_SPAN] = {offsetof(struct sim_inflate_opts, span_s), "the span", 0, 86400.0 * 3650,
                          true, "positive trace seconds, ten years (315360000) at most"},
};

void sim_inflate_defaults(struct sim_inflate_opts *o)
{
    *o = (struct sim_inflate_opts){
        .ls_fill = 0.8,
        .be_load = 0.5,
        .be_stretch = 10,
        .span_s = 21600,
        .seed = 1,
        .max_pods = SIM_TRACE_MAX_PODS,
    };
}

/* Whether v is in option which's range (NaN is not). */
static bool in_range(enum sim_inflate_opt which, double v)
{
    return v <= ranges[which].hi &&
           (ranges[which].lo_out ? v > ranges[which].lo : v >= ranges[which].lo);
}

int sim_inflate_set(struct sim_inflate_opts *o, enum sim_inflate_opt which, double v)
{
    CHECK((unsigned)which < SIM_INFLATE_NOPTS);
    if (!in_range(which, v))
        return -EINVAL;
    *(double *)(void *)((char *)o + ranges[which].off) = v;
    return 0;
}

const char *sim_inflate_range(enum sim_inflate_opt which)
{
    CHECK((unsigned)which < SIM_INFLATE_NOPTS);
    return ranges[which].range;
}

/* The run time of a trace BE pod: deletion - creation, or to the trace's end. */
static double run_time(const struct sim_trace *t, const struct sim_pod *p)
{
    return (p->delete_s < 0 ? t->span_s : p->delete_s) - p->create_s;
}

/*
 * Appends a copy of p, as repeat k of it ("<name>" for k = 0, "<name>-c<k>" after): 0, or
 * -E2BIG with why in err, nothing appended, when v holds max pods already (the most the
 * result may hold, so a workload of exactly that many is one).
 */
static int add(struct sim_pod **v, size_t *n, size_t *alloc, size_t max, const struct sim_pod *p,
               size_t k, double create_s, double delete_s, struct strbuf *err)
{
    struct sim_pod *q;

    if (*n >= max) {
        strbuf_reset(err);
        strbuf_addf(err, "the inflated workload takes more pods than a trace may hold (%zu)", max);
        return -E2BIG;
    }
    if (*n == *alloc) {
        *alloc = *alloc ? *alloc * 2 : 1024;
        *v = xrealloc(*v, *alloc * sizeof(**v));
    }
    q = &(*v)[(*n)++];
    *q = *p;
    if (k) {
        size_t len = strlen(p->name) + 24;
        q->name = xmalloc(len);
        (void)snprintf(q->name, len, "%s-c%zu", p->name, k);
    } else {
        q->name = xstrdup(p->name);
    }
    q->create_s = create_s;
    q->delete_s = delete_s;
    return 0;
}

static int check(const struct sim_inflate_opts *o, struct strbuf *err)
{
    for (unsigned i = 0; i < SIM_INFLATE_NOPTS; i++) {
        double v = *(const double *)(const void *)((const char *)o + ranges[i].off);
        if (!in_range((enum sim_inflate_opt)i, v)) {
            strbuf_reset(err);
            strbuf_addf(err, "%s must be %s", ranges[i].name, ranges[i].range);
            return -EINVAL;
        }
    }
    return 0;
}

static int fail(struct strbuf *err, int r, const char *msg)
{
    strbuf_reset(err);
    strbuf_addstr(err, msg);
    return r;
}

/* Index into be[] of the job whose cumulative run time passes x (length-biased choice). */
static size_t pick(const double *cum, size_t n, double x)
{
    size_t lo = 0, hi = n - 1;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cum[mid] > x)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

int sim_trace_inflate(struct sim_trace *t, const struct sim_inflate_opts *o, struct strbuf *err)
{
    struct sim_pod *v = NULL;
    size_t n = 0, alloc = 0, nls = 0, nbe = 0, *ls, *be, *reps;
    double fleet = 0, work = 0, runs = 0, req = 0, rate = 0, at = 0, *cum;
    size_t running = 0;
    size_t max = o->max_pods && o->max_pods < SIM_TRACE_MAX_PODS ? o->max_pods : SIM_TRACE_MAX_PODS;
    int r = 0;

    if ((r = check(o, err)) < 0)
        return r;
    for (size_t i = 0; i < t->nnodes; i++)
        fleet += (double)t->nodes[i].cpu_milli;
    ls = xcalloc(t->npods + 1, sizeof(*ls));
    be = xcalloc(t->npods + 1, sizeof(*be));
    reps = xcalloc(t->npods + 1, sizeof(*reps));
    cum = xcalloc(t->npods + 1, sizeof(*cum));
    for (size_t i = 0; i < t->npods; i++) {
        const struct sim_pod *p = &t->pods[i];
        double d = run_time(t, p) * o->be_stretch;
        if (p->cls == SIM_LS && p->cpu_milli > 0) {
            ls[nls++] = i;
        } else if (p->cls == SIM_BE && d > 0) {
            work += (double)p->cpu_milli * d;
            runs += d;
            cum[nbe] = runs;
            be[nbe++] = i;
        }
    }
    if (o->ls_fill > 0 && !nls) {
        r = fail(err, -EINVAL, "the trace has no LS pod with a CPU request to fill the fleet with");
        goto out;
    }
    if (o->be_load > 0 && !(work > 0)) {
        r = fail(err, -EINVAL,
                 "the trace has no BE pod with a CPU request and a run time to draw jobs from");
        goto out;
    }
    if (o->be_load > 0) {
        rate = o->be_load * fleet / (work / (double)nbe); /* arrivals per trace second */
        /* the jobs running at any moment once the stream is steady (Little's law) */
        running = (size_t)llround(rate * runs / (double)nbe);
        if (rate * o->span_s + (double)running > (double)max) {
            strbuf_reset(err);
            strbuf_addf(err,
                        "the BE load would make about %.0f jobs, more than %zu: lower the load "
                        "or the span, or stretch the jobs",
                        rate * o->span_s + (double)running, max);
            r = -E2BIG;
            goto out;
        }
    }
    /* (nls and nbe guard the picks: the analyser cannot tie them to the fractions) */
    for (size_t k = 0; nls > 0 && req < o->ls_fill * fleet; k++) {
        const struct sim_pod *p = &t->pods[ls[k % nls]];
        if ((r = add(&v, &n, &alloc, max, p, reps[ls[k % nls]]++, 0, -1, err)) < 0)
            goto out;
        req += (double)p->cpu_milli;
    }
    /*
     * The stream starts steady, as in a cluster that has been running: the jobs running at
     * time 0 are drawn as a stationary stream holds them, each job with a chance in proportion
     * to its run time, and a uniform part of that run time left.
     */
    for (size_t k = 0; k < running; k++) {
        size_t j = pick(cum, nbe, sim_model_uniform(o->seed, DRAW_RUNNING, k, 0) * runs);
        const struct sim_pod *p = &t->pods[be[j]];
        double left =
            run_time(t, p) * o->be_stretch * sim_model_uniform(o->seed, DRAW_RUNNING, k, 1);
        if ((r = add(&v, &n, &alloc, max, p, reps[be[j]]++, 0, left > 1 ? left : 1, err)) < 0)
            goto out;
    }
    for (size_t k = 0; nbe > 0 && rate > 0; k++) {
        const struct sim_pod *p = &t->pods[be[k % nbe]];
        double u = sim_model_uniform(o->seed, DRAW_ARRIVAL, k, 0);
        at += -log1p(-u) / rate;
        if (at >= o->span_s)
            break;
        if ((r = add(&v, &n, &alloc, max, p, reps[be[k % nbe]]++, at,
                     at + run_time(t, p) * o->be_stretch, err)) < 0)
            goto out;
    }
    if (!n) {
        r = fail(err, -EINVAL, "the inflated workload is empty (no LS fill and no BE load)");
        goto out;
    }
    if ((r = sim_trace_sort_pods(v, n, "the inflated workload", err)) < 0)
        goto out;
    for (size_t i = 0; i < t->npods; i++)
        free(t->pods[i].name);
    free(t->pods);
    t->pods = v;
    t->npods = n;
    t->span_s = o->span_s;
    v = NULL;
    n = 0;
out:
    for (size_t i = 0; i < n; i++)
        free(v[i].name);
    free(v);
    free(ls);
    free(be);
    free(reps);
    free(cum);
    return r;
}
