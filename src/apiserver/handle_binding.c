/*
 * POST pods/<name>/binding (kube's pod registry BindingREST): sets spec.nodeName through the
 * update path with the Binding's preconditions. Its own file as each subresource has.
 */
#include <string.h>
#include <time.h>

#include "api/rfc3339.h"
#include "apiserver/apiserver-int.h"
#include "apiserver/pods.h"
#include "http/server.h"

void apiserver__do_bind(struct apiserver__call *c)
{
    cJSON *binding = apiserver__read_sub_body(c, "Binding"), *pod = NULL;
    struct webhook_attrs wa;
    struct strbuf why = STRBUF_INIT, bytes = STRBUF_INIT, msg = STRBUF_INIT;
    char ts[RFC3339_STR_MAX];
    uint64_t rv = 0;
    int r;

    if (!binding)
        return;
    if (!(pod = apiserver__read_current(c, &rv)) ||
        !apiserver__preconditions_hold(c, cJSON_GetObjectItem(binding, "metadata"), pod, rv))
        goto out;
    apiserver__wh_attrs(c, WEBHOOK_CREATE, NULL, &wa);
    wa.kind = "Binding";
    if (!apiserver__wh_mutate(c, &wa, &binding) || !apiserver__wh_validate(c, &wa, binding))
        goto out;
    (void)rfc3339_format((int64_t)time(NULL), ts);
    r = pods_bind(pod, binding, ts, &why);
    if (r == -EINVAL) {
        apiserver__reply_bad_request(c, why.buf);
        goto out;
    }
    if (r < 0) {
        strbuf_addf(&msg, "Operation cannot be fulfilled on pods/binding \"%s\": %s", c->ri.name,
                    why.buf);
        apiserver__reply_status(c, api_status_failure(409, "Conflict", msg.buf, &c->target));
        goto out;
    }
    if ((r = apiserver__encode_for_store(pod, &bytes)) == 0 && !c->dry_run)
        r = store_update(c->srv->store, c->key.buf, bytes.buf, bytes.len, rv, NULL);
    if (r < 0)
        apiserver__reply_status(c, r == -ESTALE ? api_status_conflict(&c->target)
                                                : api_status_from_errno(r, NULL, &c->target));
    else
        apiserver__reply_status(c, api_status_success(201, NULL, NULL));
out:
    cJSON_Delete(binding);
    cJSON_Delete(pod);
    strbuf_release(&why);
    strbuf_release(&bytes);
    strbuf_release(&msg);
}
