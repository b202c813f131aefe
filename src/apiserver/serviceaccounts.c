/* The default ServiceAccount of every namespace (see serviceaccounts.h). */
#include "apiserver/serviceaccounts.h"

#include <stdlib.h>
#include <string.h>

#include "apiserver/store.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"

#define NS_PREFIX "/core/namespaces//"

struct names {
    char **v;
    size_t n, alloc;
};

/* Collects the names of namespaces that are not being deleted. */
static int active_ns(const struct store_item *it, void *ud)
{
    struct names *l = ud;
    cJSON *o = NULL, *meta, *status;
    const char *name, *phase;

    if (json_parse(it->value, it->len, NULL, &o, NULL) < 0)
        return 0;
    meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
    status = cJSON_GetObjectItemCaseSensitive(o, "status");
    name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "name"));
    phase = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(status, "phase"));
    if (name && !cJSON_GetObjectItemCaseSensitive(meta, "deletionTimestamp") &&
        !(phase && !strcmp(phase, "Terminating"))) {
        if (l->n == l->alloc) {
            l->alloc = l->alloc ? l->alloc * 2 : 16;
            l->v = xrealloc(l->v, l->alloc * sizeof(*l->v));
        }
        l->v[l->n++] = xstrdup(name);
    }
    cJSON_Delete(o);
    return 0;
}

int api_serviceaccounts_ensure_defaults(struct store *store, const char *now,
                                        void (*new_uid)(char uid[37]))
{
    struct names l = {0};
    struct strbuf key = STRBUF_INIT, val = STRBUF_INIT;
    int r = store_list(store, NS_PREFIX, NULL, 0, active_ns, &l, NULL), made = 0;

    for (size_t i = 0; r >= 0 && i < l.n; i++) {
        struct store_item it = {0};
        char uid[37];

        strbuf_reset(&key);
        strbuf_addf(&key, "/core/serviceaccounts/%s/default", l.v[i]);
        if (store_get(store, key.buf, &it) == 0) {
            store_item_release(&it);
            continue;
        }
        new_uid(uid);
        strbuf_reset(&val);
        strbuf_addf(&val,
                    "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":"
                    "\"default\",\"namespace\":\"%s\",\"uid\":\"%s\",\"creationTimestamp\":"
                    "\"%s\"}}",
                    l.v[i], uid, now);
        r = store_create(store, key.buf, val.buf, val.len, NULL);
        if (r == -EEXIST)
            r = 0;
        else if (r >= 0)
            made++;
    }
    for (size_t i = 0; i < l.n; i++)
        free(l.v[i]);
    free(l.v);
    strbuf_release(&key);
    strbuf_release(&val);
    return r < 0 ? r : made;
}
