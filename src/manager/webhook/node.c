/*
 * /mutate-node-status (manager-behaviour.md 4.8; upstream pkg/webhook/node/plugins/
 * resourceamplification), gate NodeMutatingWebhook, off by default: a node whose annotation
 * node.koordinator.sh/resource-amplification-ratio asks for more than 1x of cpu or memory
 * advertises allocatable = raw x ratio, the raw value kept in node.koordinator.sh/raw-allocatable
 * so the next status write (the kubelet's, which knows nothing of it) is amplified from the
 * kubelet's value and not from the amplified one.
 */
#include <errno.h>
#include <string.h>

#include "api/quantity.h"
#include "base/base.h"
#include "codec/codec.h"
#include "manager/webhook/webhook-int.h"

#define A_RATIO "node.koordinator.sh/resource-amplification-ratio"
#define A_RAW   "node.koordinator.sh/raw-allocatable"

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

static bool same_quantity(const cJSON *a, const cJSON *b)
{
    struct quantity x, y;

    if (!cJSON_IsString(a) || !cJSON_IsString(b))
        return a == b;
    if (quantity_parse(a->valuestring, &x) < 0 || quantity_parse(b->valuestring, &y) < 0)
        return !strcmp(a->valuestring, b->valuestring);
    return quantity_cmp(&x, &y) == 0;
}

int webhook__mutate_node(const struct webhook_config *cfg, const struct webhook__request *req,
                         const struct webhook_data *d, struct webhook__result *res)
{
    static const char *const names[] = {"cpu", "memory"};
    const char *ratio_s, *raw_s;
    cJSON *node, *ratio = NULL, *raw = NULL, *annots, *alloc;
    const cJSON *old_alloc;
    bool fresh = false;
    struct strbuf out = STRBUF_INIT;

    (void)cfg;
    (void)d;
    if (strcmp(req->resource, "nodes") || *req->group || strcmp(req->subresource, "status") ||
        !req->object)
        return 0;
    if (strcmp(req->operation, "CREATE") && strcmp(req->operation, "UPDATE"))
        return 0;
    CHECK(node = cJSON_Duplicate(req->object, true));
    annots = webhook__object_at(webhook__object_at(node, "metadata"), "annotations");
    ratio_s = cJSON_GetStringValue(get(annots, A_RATIO));
    if (!ratio_s || !*ratio_s) {
        cJSON_DeleteItemFromObjectCaseSensitive(annots, A_RAW);
        goto done;
    }
    if (json_parse(ratio_s, strlen(ratio_s), NULL, &ratio, NULL) < 0 || !cJSON_IsObject(ratio))
        goto done; /* upstream logs and leaves the node alone */
    alloc = webhook__object_at(webhook__object_at(node, "status"), "allocatable");
    old_alloc = get(get(req->old_object, "status"), "allocatable");
    raw_s = cJSON_GetStringValue(get(annots, A_RAW));
    if (raw_s && json_parse(raw_s, strlen(raw_s), NULL, &raw, NULL) < 0) {
        cJSON_Delete(raw);
        raw = NULL;
    }
    if (!cJSON_IsObject(raw))
        fresh = true;
    for (size_t i = 0; i < ARRAY_SIZE(names) && !fresh; i++)
        if (req->old_object && !same_quantity(get(alloc, names[i]), get(old_alloc, names[i])))
            fresh = true;
    if (fresh) {
        cJSON_Delete(raw);
        CHECK(raw = cJSON_CreateObject());
        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
            if (get(alloc, names[i]))
                CHECK(cJSON_AddItemToObject(raw, names[i],
                                            cJSON_Duplicate(get(alloc, names[i]), true)));
        CHECK(json_print(raw, &out) == 0);
        webhook__set_str(annots, A_RAW, out.buf);
    }
    for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
        const cJSON *rv = get(raw, names[i]), *f = get(ratio, names[i]);
        struct quantity q, amp;
        int64_t milli;
        char buf[QUANTITY_STR_MAX];
        if (!cJSON_IsNumber(f) || f->valuedouble <= 1 || !cJSON_IsString(rv) ||
            quantity_parse(rv->valuestring, &q) < 0 || quantity_milli(&q, &milli) < 0)
            continue;
        quantity_from_milli((int64_t)((double)milli * f->valuedouble), q.format, &amp);
        (void)quantity_format(&amp, buf);
        webhook__set_str(alloc, names[i], buf);
    }
done:
    if (!annots->child && !get(get(req->object, "metadata"), "annotations"))
        cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "metadata"),
                                                "annotations");
    res->mutated = node;
    cJSON_Delete(ratio);
    cJSON_Delete(raw);
    strbuf_release(&out);
    return 0;
}
