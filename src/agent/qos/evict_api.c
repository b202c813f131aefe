/*
 * Eviction through the API server: the Eviction request, its Event and the memory of evicted
 * UIDs. See evict_api.h.
 */
#include "agent/qos/evict_api.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "kube/client.h"
#include "kube/events.h"

struct qos_evict_api {
    struct qos_evict_api_opts o;
    struct qos_evicted recent;
    struct qos_evict_api_stats stats;
};

int qos_evict_api_new(const struct qos_evict_api_opts *opts, struct qos_evict_api **ret)
{
    struct qos_evict_api *a;

    if (!opts || !opts->client)
        return -EINVAL;
    a = xcalloc(1, sizeof(*a));
    a->o = *opts;
    qos_evicted_init(&a->recent);
    *ret = a;
    return 0;
}

void qos_evict_api_free(struct qos_evict_api *a)
{
    if (!a)
        return;
    qos_evicted_release(&a->recent);
    free(a);
}

const struct qos_evicted *qos_evict_api_recent(const struct qos_evict_api *a)
{
    return &a->recent;
}

void qos_evict_api_stats(const struct qos_evict_api *a, struct qos_evict_api_stats *ret)
{
    *ret = a->stats;
}

static bool is_be_feature(const char *feature)
{
    return !strcmp(feature, QOS_FEATURE_BE_MEMORY_EVICT) ||
           !strcmp(feature, QOS_FEATURE_BE_CPU_EVICT);
}

/* The Eviction body: policy/v1, the pod's name, its UID as precondition. */
static cJSON *eviction_body(const struct qos_pod *pod)
{
    cJSON *o = cJSON_CreateObject(), *m, *pre;

    CHECK(o);
    CHECK(cJSON_AddStringToObject(o, "apiVersion", "policy/v1"));
    CHECK(cJSON_AddStringToObject(o, "kind", "Eviction"));
    CHECK((m = cJSON_AddObjectToObject(o, "metadata")));
    CHECK(cJSON_AddStringToObject(m, "name", pod->name));
    CHECK(cJSON_AddStringToObject(m, "namespace", pod->namespace));
    CHECK((pre = cJSON_AddObjectToObject(o, "deleteOptions")));
    CHECK((pre = cJSON_AddObjectToObject(pre, "preconditions")));
    CHECK(cJSON_AddStringToObject(pre, "uid", pod->uid));
    return o;
}

/* The object reference the Event is about. */
static cJSON *pod_ref(const struct qos_pod *pod)
{
    cJSON *o = cJSON_CreateObject(), *m;

    CHECK(o);
    CHECK(cJSON_AddStringToObject(o, "apiVersion", "v1"));
    CHECK(cJSON_AddStringToObject(o, "kind", "Pod"));
    CHECK((m = cJSON_AddObjectToObject(o, "metadata")));
    CHECK(cJSON_AddStringToObject(m, "name", pod->name));
    CHECK(cJSON_AddStringToObject(m, "namespace", pod->namespace));
    CHECK(cJSON_AddStringToObject(m, "uid", pod->uid));
    return o;
}

static void record(struct qos_evict_api *a, const struct qos_pod *pod, const char *feature,
                   const char *error)
{
    struct strbuf msg = STRBUF_INIT, text = STRBUF_INIT;
    cJSON *ref;
    int r;

    if (!a->o.recorder)
        return;
    qos_evict_message(feature, pod->name, &msg);
    qos_evict_event_message(pod->namespace, pod->name, QOS_EVICT_REASON, msg.buf, error, &text);
    ref = pod_ref(pod);
    r = kube_recorder_event(a->o.recorder, ref, KUBE_EVENT_WARNING,
                            error ? QOS_EVICT_EVENT_FAIL : QOS_EVICT_EVENT_SUCCESS, "%s", text.buf);
    if (r < 0) {
        a->stats.event_errors++;
        log_debug("qos", "cannot record the eviction event of pod \"%s/%s\": %s", pod->namespace,
                  pod->name, strerror(-r));
    } else {
        a->stats.events++;
    }
    cJSON_Delete(ref);
    strbuf_release(&msg);
    strbuf_release(&text);
}

int qos_evict_api_evict(void *ctx, const char *feature, const struct qos_pod *pod, int64_t now_ms)
{
    struct qos_evict_api *a = ctx;
    struct strbuf path = STRBUF_INIT, err = STRBUF_INIT;
    struct kube_status st = {0};
    char *body = NULL;
    cJSON *ev;
    int r;

    if (is_be_feature(feature) && pod->qos_label != API_QOS_BE) {
        a->stats.refused++;
        log_error("qos", "refusing to evict pod \"%s/%s\" for %s: it is not labelled BE",
                  pod->namespace ? pod->namespace : "", pod->name ? pod->name : "", feature);
        return -EPERM;
    }
    if (!pod->namespace || !*pod->namespace || !pod->name || !*pod->name || !pod->uid || !*pod->uid)
        return -EINVAL;
    if (qos_evicted_contains(&a->recent, pod->uid, now_ms)) {
        a->stats.recent++;
        return -EALREADY;
    }
    ev = eviction_body(pod);
    CHECK((body = cJSON_PrintUnformatted(ev)));
    kube_path(&kube_res_pods, pod->namespace, pod->name, "eviction", &path);
    r = kube_request(a->o.client, "POST", path.buf, body, NULL, NULL, &st);
    if (r < 0) {
        a->stats.failed++;
        strbuf_addstr(&err, st.message[0] ? st.message : strerror(-r));
        record(a, pod, feature, err.buf);
    } else {
        a->stats.evicted++;
        /* Remembering can only fail for memory; the pod is gone either way. */
        (void)qos_evicted_add(&a->recent, pod->uid, now_ms);
        record(a, pod, feature, NULL);
    }
    cJSON_free(body);
    cJSON_Delete(ev);
    strbuf_release(&path);
    strbuf_release(&err);
    return r < 0 ? r : 0;
}
