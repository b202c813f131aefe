/* The agent's informers (states.h). */
#include "agent/states/states.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "kube/client.h"
#include "kube/informer.h"

enum { INF_PODS, INF_NODE, INF_NODESLO, INF_NODEMETRIC, INF_COUNT };

struct states {
    struct states_opts o;
    char *node;
    struct kube_informer *inf[INF_COUNT];
    bool stopped;
};

static void notify(struct states *s, void (*fn)(void *userdata))
{
    if (fn)
        fn(s->o.userdata);
}

static void pods_add(void *ud, const struct kube_object *obj)
{
    (void)obj;
    notify(ud, ((struct states *)ud)->o.on_pods);
}

static void pods_update(void *ud, const struct kube_object *old, const struct kube_object *obj)
{
    (void)old;
    pods_add(ud, obj);
}

static void slo_add(void *ud, const struct kube_object *obj)
{
    (void)obj;
    notify(ud, ((struct states *)ud)->o.on_nodeslo);
}

static void slo_update(void *ud, const struct kube_object *old, const struct kube_object *obj)
{
    (void)old;
    slo_add(ud, obj);
}

static void nm_add(void *ud, const struct kube_object *obj)
{
    (void)obj;
    notify(ud, ((struct states *)ud)->o.on_nodemetric);
}

static void nm_update(void *ud, const struct kube_object *old, const struct kube_object *obj)
{
    (void)old;
    nm_add(ud, obj);
}

int states_start(const struct states_opts *opts, struct states **ret)
{
    struct strbuf by_node = STRBUF_INIT, by_name = STRBUF_INIT;
    struct states *s;
    int r = 0;

    if (!opts->client || !opts->node || !*opts->node)
        return -EINVAL;
    s = xcalloc(1, sizeof(*s));
    s->o = *opts;
    s->node = xstrdup(opts->node);
    s->o.node = s->node;
    if (!s->o.metrics_client)
        s->o.metrics_client = s->o.client;
    if (!s->o.nodemetric_resource)
        s->o.nodemetric_resource = &kube_res_nodemetrics;
    strbuf_addf(&by_node, "spec.nodeName=%s", s->node);
    strbuf_addf(&by_name, "metadata.name=%s", s->node);
    s->inf[INF_PODS] =
        kube_informer_new(s->o.client, &(struct kube_informer_opts){.resource = &kube_res_pods,
                                                                    .field_selector = by_node.buf,
                                                                    .backoff_max_ms = 5000});
    s->inf[INF_NODE] =
        kube_informer_new(s->o.client, &(struct kube_informer_opts){.resource = &kube_res_nodes,
                                                                    .field_selector = by_name.buf,
                                                                    .backoff_max_ms = 5000});
    s->inf[INF_NODESLO] =
        kube_informer_new(s->o.client, &(struct kube_informer_opts){.resource = &kube_res_nodeslos,
                                                                    .field_selector = by_name.buf,
                                                                    .backoff_max_ms = 5000});
    /* The manager's API moves with its leader: come back within seconds (seed 001). */
    s->inf[INF_NODEMETRIC] = kube_informer_new(
        s->o.metrics_client, &(struct kube_informer_opts){.resource = s->o.nodemetric_resource,
                                                          .field_selector = by_name.buf,
                                                          .backoff_initial_ms = 200,
                                                          .backoff_max_ms = 2000});
    strbuf_release(&by_node);
    strbuf_release(&by_name);
    CHECK(kube_informer_add_handlers(
              s->inf[INF_PODS], &(struct kube_handlers){pods_add, pods_update, pods_add, s}) == 0);
    CHECK(kube_informer_add_handlers(s->inf[INF_NODESLO],
                                     &(struct kube_handlers){slo_add, slo_update, NULL, s}) == 0);
    CHECK(kube_informer_add_handlers(s->inf[INF_NODEMETRIC],
                                     &(struct kube_handlers){nm_add, nm_update, NULL, s}) == 0);
    for (int i = 0; i < INF_COUNT && r == 0; i++)
        r = kube_informer_start(s->inf[i]);
    if (r < 0) {
        states_free(s);
        return r;
    }
    *ret = s;
    return 0;
}

bool states_wait_synced(struct states *s, long timeout_ms)
{
    return kube_informer_wait_synced(s->inf[INF_PODS], timeout_ms) &&
           kube_informer_wait_synced(s->inf[INF_NODE], timeout_ms);
}

size_t states_pods(struct states *s, struct kube_object ***ret)
{
    return kube_informer_list(s->inf[INF_PODS], NULL, ret);
}

struct kube_object *states_pod_by_uid(struct states *s, const char *uid)
{
    struct kube_object **v = NULL, *found = NULL;
    size_t n = states_pods(s, &v);

    for (size_t i = 0; i < n && !found; i++) {
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(kube_object_json(v[i]), "metadata");
        const char *u = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "uid"));
        if (u && !strcmp(u, uid))
            found = kube_object_ref(v[i]);
    }
    kube_objects_free(v, n);
    return found;
}

struct kube_object *states_node(struct states *s)
{
    return kube_informer_get(s->inf[INF_NODE], s->node);
}

struct kube_object *states_nodeslo(struct states *s)
{
    return kube_informer_get(s->inf[INF_NODESLO], s->node);
}

struct kube_object *states_nodemetric(struct states *s)
{
    return kube_informer_get(s->inf[INF_NODEMETRIC], s->node);
}

void states_stop(struct states *s)
{
    if (!s || s->stopped)
        return;
    s->stopped = true;
    for (int i = 0; i < INF_COUNT; i++)
        if (s->inf[i])
            kube_informer_stop(s->inf[i]);
}

void states_free(struct states *s)
{
    if (!s)
        return;
    states_stop(s);
    for (int i = 0; i < INF_COUNT; i++)
        kube_informer_free(s->inf[i]);
    free(s->node);
    free(s);
}
