/* The NodeMetric report loop (reporter.h). */
#include "agent/report/reporter.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "api/api.h"
#include "api/schema.h"
#include "base/base.h"
#include "base/log.h"
#include "kube/client.h"

#define COMP "agent"

struct reporter {
    struct reporter_opts o;
    char *node;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* CLOCK_MONOTONIC */
    bool stopping, now;
    struct reporter_stats stats;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until deadline (monotonic ms), a reporter_now() or stop; true when woken early. Called
 * with the lock held. */
static bool wait_until(struct reporter *r, int64_t deadline)
{
    while (!r->stopping && !r->now) {
        struct timespec ts = {(time_t)(deadline / 1000), (long)(deadline % 1000) * 1000000};
        if (now_ms() >= deadline)
            return false;
        (void)pthread_cond_timedwait(&r->cond, &r->lock, &ts);
    }
    return true;
}

/* Full jitter over [d/2, d]: retrying agents of a whole cluster do not arrive together. */
static int64_t jitter(int64_t d)
{
    unsigned short x = 0;

    if (getrandom(&x, sizeof(x), 0) != (ssize_t)sizeof(x))
        x = (unsigned short)(now_ms() & 0xffff);
    return d / 2 + (d / 2) * x / 0xffff;
}

/* Worth another try soon: the manager is starting, failing over or unreachable, or the
 * write raced another. */
static bool retryable(int err)
{
    return err == -EAGAIN || err == -ECONNREFUSED || err == -ETIMEDOUT || err == -EIO ||
           err == -ESTALE || err == -ENOENT || err == -EPROTO || err == -ECONNRESET ||
           err == -EHOSTUNREACH || err == -ENETUNREACH;
}

/* Wraps status into the NodeMetric object the PUT carries. Takes status. The status goes in
 * canonical form (schema order, canonical quantities), which koord manager stores as it comes
 * without decoding it (apiserver_opts.status_splice). */
static cJSON *envelope(struct reporter *r, cJSON *status)
{
    const struct api_kind *k = api_kind_find("slo.koordinator.sh/v1alpha1", "NodeMetric");
    cJSON *obj = cJSON_CreateObject(), *meta;

    CHECK(obj && k);
    CHECK(api_canonicalize(k->status, status) == 0);
    CHECK(cJSON_AddStringToObject(obj, "apiVersion",
                                  r->o.resource == &kube_res_nodemetrics
                                      ? "metrics.koordinator.sh/v1alpha1"
                                      : "slo.koordinator.sh/v1alpha1"));
    CHECK(cJSON_AddStringToObject(obj, "kind", "NodeMetric"));
    CHECK(meta = cJSON_AddObjectToObject(obj, "metadata"));
    CHECK(cJSON_AddStringToObject(meta, "name", r->node));
    CHECK(cJSON_AddItemToObject(obj, "status", status));
    return obj;
}

/* One report: built, then sent until accepted, refused for good, or due is reached. Returns
 * whether there was one to send. */
static bool report_once(struct reporter *r, int64_t *interval_ms)
{
    cJSON *status = r->o.build(r->o.userdata, interval_ms), *obj;
    int64_t due = now_ms() + *interval_ms, backoff = r->o.retry_initial_ms;
    struct kube_status st = {0};
    int err;

    if (!status)
        return false;
    obj = envelope(r, status);
    for (;;) {
        /* A status write needs no resourceVersion: unconditional, like koord report's. */
        err = kube_update(r->o.client, r->o.resource, NULL, obj, "status", NULL, &st);
        CHECK(pthread_mutex_lock(&r->lock) == 0);
        if (err == 0) {
            r->stats.sent++;
            r->stats.last_ok_ms = now_ms();
            CHECK(pthread_mutex_unlock(&r->lock) == 0);
            break;
        }
        r->stats.failures++;
        if (!retryable(err) || now_ms() + backoff >= due || r->stopping) {
            r->stats.dropped++;
            CHECK(pthread_mutex_unlock(&r->lock) == 0);
            log_warn(COMP, "NodeMetric report for node \"%s\" dropped: %s", r->node,
                     *st.message ? st.message : err_str(err));
            break;
        }
        log_debug(COMP, "NodeMetric report for node \"%s\" failed (%s), retrying", r->node,
                  *st.message ? st.message : err_str(err));
        (void)wait_until(r, now_ms() + jitter(backoff));
        r->now = false; /* this report is the fresh one asked for */
        CHECK(pthread_mutex_unlock(&r->lock) == 0);
        backoff = backoff * 2 > r->o.retry_max_ms ? r->o.retry_max_ms : backoff * 2;
    }
    cJSON_Delete(obj);
    return true;
}

static void *loop(void *arg)
{
    struct reporter *r = arg;
    int64_t interval = 60000, next = now_ms() + r->o.first_delay_ms;
    bool built;

    CHECK(pthread_mutex_lock(&r->lock) == 0);
    for (;;) {
        (void)wait_until(r, next);
        if (r->stopping)
            break;
        r->now = false;
        CHECK(pthread_mutex_unlock(&r->lock) == 0);
        built = report_once(r, &interval);
        CHECK(pthread_mutex_lock(&r->lock) == 0);
        /* Nothing to report yet: look again soon rather than after a whole interval. */
        next = now_ms() + (built ? interval : r->o.retry_max_ms);
    }
    CHECK(pthread_mutex_unlock(&r->lock) == 0);
    return NULL;
}

int reporter_start(const struct reporter_opts *opts, struct reporter **ret)
{
    struct reporter *r;
    pthread_condattr_t ca;
    int err;

    if (!opts->client || !opts->node || !*opts->node || !opts->build)
        return -EINVAL;
    r = xcalloc(1, sizeof(*r));
    r->o = *opts;
    r->node = xstrdup(opts->node);
    if (!r->o.resource)
        r->o.resource = &kube_res_nodemetrics;
    if (r->o.retry_initial_ms <= 0)
        r->o.retry_initial_ms = 200;
    if (r->o.retry_max_ms <= 0)
        r->o.retry_max_ms = 2000;
    CHECK(pthread_mutex_init(&r->lock, NULL) == 0);
    CHECK(pthread_condattr_init(&ca) == 0);
    CHECK(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0);
    CHECK(pthread_cond_init(&r->cond, &ca) == 0);
    (void)pthread_condattr_destroy(&ca);
    if ((err = pthread_create(&r->thread, NULL, loop, r)) != 0) {
        (void)pthread_cond_destroy(&r->cond);
        (void)pthread_mutex_destroy(&r->lock);
        free(r->node);
        free(r);
        return -err;
    }
    *ret = r;
    return 0;
}

void reporter_now(struct reporter *r)
{
    CHECK(pthread_mutex_lock(&r->lock) == 0);
    r->now = true;
    CHECK(pthread_cond_signal(&r->cond) == 0);
    CHECK(pthread_mutex_unlock(&r->lock) == 0);
}

void reporter_stats(struct reporter *r, struct reporter_stats *ret)
{
    CHECK(pthread_mutex_lock(&r->lock) == 0);
    *ret = r->stats;
    CHECK(pthread_mutex_unlock(&r->lock) == 0);
}

void reporter_free(struct reporter *r)
{
    if (!r)
        return;
    CHECK(pthread_mutex_lock(&r->lock) == 0);
    r->stopping = true;
    CHECK(pthread_cond_signal(&r->cond) == 0);
    CHECK(pthread_mutex_unlock(&r->lock) == 0);
    CHECK(pthread_join(r->thread, NULL) == 0);
    (void)pthread_cond_destroy(&r->cond);
    (void)pthread_mutex_destroy(&r->lock);
    free(r->node);
    free(r);
}
