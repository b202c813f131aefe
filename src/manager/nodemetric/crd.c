/* The slo.koordinator.sh NodeMetric objects (see crd.h). */
#include "manager/nodemetric/crd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "codec/patch.h"
#include "kube/client.h"

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
