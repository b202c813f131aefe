/* The slo.koordinator.sh NodeMetric objects (see crd.h). */
#include "manager/nodemetric/crd.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "codec/patch.h"
#include "kube/client.h"
#include "kube/informer.h"

#define CRD_GROUP   "slo.koordinator.sh"
#define CRD_VERSION "v1alpha1"

const struct kube_resource nodemetric_crd_resource = {CRD_GROUP, CRD_VERSION, "nodemetrics",
                                                      "NodeMetric", false};

int nodemetric_crd_served(struct kube_client *c)
{
    const cJSON *res, *e;
    cJSON *list = NULL;
    int r = kube_request(c, "GET", "/apis/" CRD_GROUP "/" CRD_VERSION, NULL, NULL, &list, NULL);

    if (r == -ENOENT)
        return 0;
    if (r < 0)
        return r;
    r = 0;
    res = cJSON_GetObjectItemCaseSensitive(list, "resources");
    cJSON_ArrayForEach(e, res)
    {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));
        if (name && !strcmp(name, "nodemetrics"))
            r = 1;
    }
    cJSON_Delete(list);
    return r;
}

int nodemetric_crd_apply(struct kube_client *c, const char *node, const cJSON *spec, bool keep_spec)
{
    cJSON *cur = NULL, *obj = NULL, *meta, *copy;
    int r = kube_get(c, &nodemetric_crd_resource, NULL, node, &cur, NULL);

    if (r == -ENOENT) {
        CHECK(obj = cJSON_CreateObject());
        CHECK(cJSON_AddStringToObject(obj, "apiVersion", CRD_GROUP "/" CRD_VERSION));
        CHECK(cJSON_AddStringToObject(obj, "kind", "NodeMetric"));
        CHECK(meta = cJSON_AddObjectToObject(obj, "metadata"));
        CHECK(cJSON_AddStringToObject(meta, "name", node));
        CHECK(copy = cJSON_Duplicate(spec, true));
        CHECK(cJSON_AddItemToObject(obj, "spec", copy));
        r = kube_create(c, &nodemetric_crd_resource, NULL, obj, NULL, NULL);
        /* Created meanwhile (another writer, or a retried request that went through). */
        if (r == -EEXIST)
            r = -ESTALE;
        goto out;
    }
    if (r < 0)
        goto out;
    if (keep_spec || json_value_equal(cJSON_GetObjectItemCaseSensitive(cur, "spec"), spec))
        goto out; /* r == 0: nothing to write */
    /* The update carries the object's resourceVersion: a concurrent change is a conflict. */
    CHECK(copy = cJSON_Duplicate(spec, true));
    if (cJSON_GetObjectItemCaseSensitive(cur, "spec"))
        CHECK(cJSON_ReplaceItemInObjectCaseSensitive(cur, "spec", copy));
    else
        CHECK(cJSON_AddItemToObject(cur, "spec", copy));
    r = kube_update(c, &nodemetric_crd_resource, NULL, cur, NULL, NULL, NULL);
out:
    cJSON_Delete(cur);
    cJSON_Delete(obj);
    return r;
}

int nodemetric_crd_delete(struct kube_client *c, const char *node)
{
    int r = kube_delete(c, &nodemetric_crd_resource, NULL, node, NULL);

    return r == -ENOENT ? 0 : r;
}

int nodemetric_crd_names(struct kube_client *c, char ***ret)
{
    const cJSON *e;
    cJSON *list = NULL;
    char **names;
    size_t n = 0;
    int r = kube_list(c, &nodemetric_crd_resource, NULL, NULL, &list, NULL);

    if (r < 0)
        return r;
    names = xcalloc((size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(list, "items")) + 1,
                    sizeof(char *));
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(e, "metadata"), "name"));
        if (name)
            names[n++] = xstrdup(name);
    }
    cJSON_Delete(list);
    *ret = names;
    return (int)n;
}

/* ---- the watch ---- */

struct nodemetric_crd_watch {
    struct nodemetric_crd_watch_opts o;
    struct kube_informer *inf;
    pthread_t waiter;
    bool waiter_started;
    atomic_bool served, stopping;
};

static void call(void (*fn)(void *, const char *), void *userdata, const char *node)
{
    if (fn)
        fn(userdata, node);
}

static void on_add(void *userdata, const struct kube_object *obj)
{
    struct nodemetric_crd_watch *w = userdata;

    call(w->o.on_object, w->o.userdata, kube_object_name(obj));
    call(w->o.on_status, w->o.userdata, kube_object_name(obj));
}

/* Whether member key is the same in a and b; cJSON_Compare(NULL, NULL) is false, but two
 * objects without a status (the manager creates them so) have not changed it. */
static bool same(const cJSON *a, const cJSON *b, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(a, key),
                *y = cJSON_GetObjectItemCaseSensitive(b, key);

    return (!x && !y) || cJSON_Compare(x, y, true);
}

/* Upstream's NodeMetric controller looks at spec (generation) changes, its NodeResource
 * controller at status changes; a resync (old == obj) is neither. */
static void on_update(void *userdata, const struct kube_object *old, const struct kube_object *obj)
{
    struct nodemetric_crd_watch *w = userdata;

    if (old == obj)
        return;
    if (!same(kube_object_json(old), kube_object_json(obj), "spec"))
        call(w->o.on_object, w->o.userdata, kube_object_name(obj));
    if (!same(kube_object_json(old), kube_object_json(obj), "status"))
        call(w->o.on_status, w->o.userdata, kube_object_name(obj));
}

/* Deleted: the spec worker re-creates it when its Node exists (upstream's controller does on
 * the delete event), and batch resources are looked at again without its report. */
static void on_delete(void *userdata, const struct kube_object *obj)
{
    on_add(userdata, obj);
}

/* Waits for the informer's first list (the CRD served), then tells the manager. */
static void *waiter(void *arg)
{
    struct nodemetric_crd_watch *w = arg;
    struct kube_object **objs = NULL;
    size_t n;

    while (!kube_informer_wait_synced(w->inf, 3600L * 1000))
        if (atomic_load(&w->stopping))
            return NULL;
    atomic_store(&w->served, true);
    if (w->o.on_served)
        w->o.on_served(w->o.userdata);
    n = kube_informer_list(w->inf, NULL, &objs);
    for (size_t i = 0; i < n; i++)
        call(w->o.on_object, w->o.userdata, kube_object_name(objs[i]));
    kube_objects_free(objs, n);
    return NULL;
}

struct nodemetric_crd_watch *nodemetric_crd_watch_new(struct kube_client *c,
                                                      const struct nodemetric_crd_watch_opts *o)
{
    struct nodemetric_crd_watch *w = xcalloc(1, sizeof(*w));

    w->o = *o;
    atomic_init(&w->served, false);
    atomic_init(&w->stopping, false);
    w->inf = kube_informer_new(c, &(struct kube_informer_opts){
                                      .resource = &nodemetric_crd_resource,
                                      .backoff_max_ms = o->backoff_max_ms,
                                  });
    CHECK(kube_informer_add_handlers(
              w->inf, &(struct kube_handlers){on_add, on_update, on_delete, w}) == 0);
    return w;
}

int nodemetric_crd_watch_start(struct nodemetric_crd_watch *w)
{
    int r;

    if ((r = kube_informer_start(w->inf)) < 0)
        return r;
    if ((r = pthread_create(&w->waiter, NULL, waiter, w)) != 0)
        return -r;
    w->waiter_started = true;
    return 0;
}

bool nodemetric_crd_watch_served(struct nodemetric_crd_watch *w)
{
    return atomic_load(&w->served);
}

struct kube_object *nodemetric_crd_watch_get(struct nodemetric_crd_watch *w, const char *node)
{
    return w ? kube_informer_get(w->inf, node) : NULL;
}

void nodemetric_crd_watch_stop(struct nodemetric_crd_watch *w)
{
    if (!w)
        return;
    atomic_store(&w->stopping, true);
    kube_informer_stop(w->inf); /* wakes the waiter */
    if (w->waiter_started)
        (void)pthread_join(w->waiter, NULL);
    w->waiter_started = false;
}

void nodemetric_crd_watch_free(struct nodemetric_crd_watch *w)
{
    if (!w)
        return;
    nodemetric_crd_watch_stop(w);
    kube_informer_free(w->inf);
    free(w);
}
