/*
 * The scheduling cycle alone (see sbench.h): SchedulingBasic with no API server and no other
 * process. The scheduler is built from the default configuration of a profile named
 * default-scheduler; Nodes and Pods are the objects the API workload creates, fed through the
 * informer handlers' entry points (sched_scheduler_node_event/pod_event); the binding hook
 * stands for the API binding and for the informer that would then see the pod bound: it feeds
 * the pod back with spec.nodeName set, on the binding thread, as the informer's thread would.
 * This thread runs the cycles one after another, as the scheduling thread does. The difference
 * with the API workload's figure is what the API server, the client and the watches cost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/field.h"
#include "base/base.h"
#include "codec/codec.h"
#include "common/bench.h"
#include "sbench.h"
#include "sched/config/config.h"
#include "sched/framework/types.h"
#include "sched/scheduler.h"

#define STALL_SECONDS 30 /* no pod bound for this long: the run failed */

struct phase {
    const char *prefix; /* pod names: prefix + index */
    cJSON **pods;       /* the unassigned pods, as created */
    size_t n;
    atomic_size_t bound;
};

struct cycle {
    struct sched_scheduler *s;
    struct phase init, measured;
    atomic_size_t bad; /* bindings of pods we did not make, or twice */
    unsigned char *seen_init, *seen_measured;
};

/* The phase and index of a pod name, or NULL. */
static struct phase *phase_of(struct cycle *c, const char *name, size_t *ret_i,
                              unsigned char **ret_seen)
{
    struct phase *ph[] = {&c->measured, &c->init};
    unsigned char *seen[] = {c->seen_measured, c->seen_init};

    for (size_t k = 0; k < ARRAY_SIZE(ph); k++) {
        size_t len = strlen(ph[k]->prefix);
        int64_t i;
        if (strncmp(name, ph[k]->prefix, len) || parse_i64(name + len, &i) < 0 || i < 0 ||
            (size_t)i >= ph[k]->n)
            continue;
        *ret_i = (size_t)i;
        *ret_seen = seen[k];
        return ph[k];
    }
    return NULL;
}

/* The binding: recorded, and the pod fed back bound, as the pod informer would. */
static int bind_hook(void *userdata, const struct sched_pod *pod, const char *node)
{
    struct cycle *c = userdata;
    unsigned char *seen = NULL;
    struct phase *ph;
    cJSON *bound, *spec;
    size_t i = 0;

    ph = phase_of(c, pod->name, &i, &seen);
    if (!ph || seen[i]) {
        atomic_fetch_add(&c->bad, 1);
        return -EINVAL;
    }
    seen[i] = 1;
    bound = cJSON_Duplicate(ph->pods[i], true);
    CHECK(bound);
    spec = cJSON_GetObjectItemCaseSensitive(bound, "spec");
    CHECK(cJSON_AddStringToObject(spec, "nodeName", node));
    sched_scheduler_pod_event(c->s, ph->pods[i], bound, false);
    cJSON_Delete(bound);
    atomic_fetch_add(&ph->bound, 1);
    return 0;
}

static void phase_make(struct phase *ph, const char *prefix, size_t n)
{
    ph->prefix = prefix;
    ph->n = n;
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    ph->pods = xcalloc(n ? n : 1, sizeof(*ph->pods));
    for (size_t i = 0; i < n; i++) {
        cJSON *p = sbench_object(SBENCH_POD_DEFAULT, NULL), *meta;
        char name[64], uid[80];
        (void)snprintf(name, sizeof(name), "%s%06zu", prefix, i);
        (void)snprintf(uid, sizeof(uid), "00000000-%s", name);
        meta = cJSON_GetObjectItemCaseSensitive(p, "metadata");
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "name");
        CHECK(cJSON_AddStringToObject(meta, "name", name));
        CHECK(cJSON_AddStringToObject(meta, "namespace", "sched-0"));
        CHECK(cJSON_AddStringToObject(meta, "uid", uid));
        CHECK(cJSON_AddStringToObject(meta, "creationTimestamp", "2026-01-01T00:00:00Z"));
        ph->pods[i] = p;
    }
}

static void phase_free(struct phase *ph)
{
    for (size_t i = 0; i < ph->n; i++)
        cJSON_Delete(ph->pods[i]);
    free(ph->pods);
}

/* Runs cycles until every pod of ph is bound; < 0 when none was bound for STALL_SECONDS. */
static int drive(struct cycle *c, struct phase *ph)
{
    size_t last = atomic_load(&ph->bound);
    double progress = now_s();

    while (atomic_load(&ph->bound) < ph->n) {
        size_t b;
        if (sched_scheduler_schedule_one(c->s, 0.1) < 0)
            return -ECANCELED;
        b = atomic_load(&ph->bound);
        if (b != last) {
            last = b;
            progress = now_s();
        } else if (now_s() - progress > STALL_SECONDS) {
            bench_fail("cycle", "%zu of %zu %s pods bound, none for %d s", b, ph->n, ph->prefix,
                       STALL_SECONDS);
            return -ETIMEDOUT;
        }
    }
    return 0;
}

int sbench_cycle_run(size_t nodes, size_t init, size_t measured, struct sbench_cycle_result *ret)
{
    /* The API workloads' profile (main.c write_config): upstream's default plugins. */
    static const char text[] = "{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
                               "\"kind\":\"KubeSchedulerConfiguration\","
                               "\"profiles\":[{\"schedulerName\":\"default-scheduler\"}]}";
    struct sched_config *cfg = NULL;
    struct strbuf perr = STRBUF_INIT;
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct cycle c = {0};
    struct sbench_tput tput;
    double t0, cpu0;
    int r = -EIO;

    memset(ret, 0, sizeof(*ret));
    ret->ran = true;
    ret->nodes = nodes;
    ret->init = init;
    ret->measured = measured;
    if (sched_config_parse(text, strlen(text), &cfg, &perr) < 0) {
        bench_fail("cycle", "the configuration does not parse: %s", perr.buf ? perr.buf : "");
        strbuf_release(&perr);
        return -EINVAL;
    }
    strbuf_release(&perr);
    phase_make(&c.init, "init-pod-", init);
    phase_make(&c.measured, "pod-", measured);
    c.seen_init = xcalloc(init ? init : 1, 1);
    c.seen_measured = xcalloc(measured ? measured : 1, 1);
    r = sched_scheduler_new(
        &(struct sched_scheduler_opts){.config = cfg, .bind_hook = bind_hook, .userdata = &c}, &c.s,
        &errs);
    if (r < 0) {
        struct strbuf m = STRBUF_INIT;
        for (size_t i = 0; i < errs.n; i++) {
            field_error_format(&errs.v[i], &m);
            strbuf_addch(&m, ' ');
        }
        bench_fail("cycle", "sched_scheduler_new: %s %s", err_str(r), m.buf ? m.buf : "");
        strbuf_release(&m);
        goto out;
    }
    if ((r = sched_scheduler_start_informers(c.s)) < 0) {
        bench_fail("cycle", "starting the queue: %s", err_str(r));
        goto out;
    }
    (void)printf("cycle: %zu nodes, %zu init pods, %zu measured pods in process ...\n", nodes, init,
                 measured);
    (void)fflush(stdout);
    for (size_t i = 0; i < nodes; i++) {
        cJSON *n = sbench_object(SBENCH_NODE_DEFAULT, NULL), *meta;
        char name[48];
        (void)snprintf(name, sizeof(name), "scheduler-perf-%06zu", i);
        meta = cJSON_GetObjectItemCaseSensitive(n, "metadata");
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "name");
        CHECK(cJSON_AddStringToObject(meta, "name", name));
        sched_scheduler_node_event(c.s, NULL, n, false);
        cJSON_Delete(n);
    }
    for (size_t i = 0; i < init; i++)
        sched_scheduler_pod_event(c.s, NULL, c.init.pods[i], false);
    if ((r = drive(&c, &c.init)) < 0)
        goto out;
    sched_scheduler_wait_bindings(c.s);

    sbench_tput_start(&tput, &c.measured.bound);
    cpu0 = bench_self_cpu();
    t0 = now_s();
    for (size_t i = 0; i < measured; i++)
        sched_scheduler_pod_event(c.s, NULL, c.measured.pods[i], false);
    ret->feed_s = now_s() - t0;
    r = drive(&c, &c.measured);
    ret->wall_s = now_s() - t0;
    ret->cpu_s = bench_self_cpu() - cpu0;
    sbench_tput_stop(&tput, &ret->tput);
    if (r < 0)
        goto out;
    sched_scheduler_wait_bindings(c.s);
    ret->pods_per_s = ret->wall_s > 0 ? (double)measured / ret->wall_s : 0;
    if (atomic_load(&c.bad)) {
        bench_fail("cycle", "%zu bindings of unknown pods or of pods bound before",
                   atomic_load(&c.bad));
        r = -EIO;
        goto out;
    }
    ret->ok = true;
    r = 0;
out:
    sched_scheduler_free(c.s);
    phase_free(&c.init);
    phase_free(&c.measured);
    free(c.seen_init);
    free(c.seen_measured);
    sched_config_free(cfg);
    field_errors_release(&errs);
    return r;
}
