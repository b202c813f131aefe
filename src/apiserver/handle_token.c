/*
 * POST serviceaccounts/<name>/token (kube's serviceaccount registry TokenREST): a TokenRequest
 * answered with a signed token for the stored account (satoken.h).
 */
#include <string.h>
#include <time.h>

#include "apiserver/apiserver-int.h"
#include "apiserver/reviews.h"
#include "base/base.h"

/* POST serviceaccounts/<name>/token: a TokenRequest for the stored account. */
void apiserver__do_token_request(struct apiserver__call *c)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct strbuf why = STRBUF_INIT;
    struct store_item it = {0};
    cJSON *body = apiserver__decode_body(c), *sa = NULL, *ans = NULL, *st = NULL;
    const char *kind, *av;
    int r;

    if (!body)
        return;
    kind = apiserver__get_string(body, "kind");
    av = apiserver__get_string(body, "apiVersion");
    if (!cJSON_IsObject(body) || (kind && strcmp(kind, "TokenRequest")) ||
        (av && strcmp(av, "authentication.k8s.io/v1"))) {
        apiserver__reply_bad_request(c, "the request body must be an authentication.k8s.io/v1 "
                                        "TokenRequest");
        goto out;
    }
    r = store_get(c->srv->store, c->key.buf, &it);
    if (r < 0) {
        apiserver__reply_status(c, api_status_from_errno(r, NULL, &c->target));
        goto out;
    }
    sa = apiserver__decode_stored(it.value, it.len, it.rv);
    r = sa ? api_token_request(c->srv->sat, c->srv->store, sa, body, (int64_t)time(NULL), &ans,
                               &errs, &st, &why)
           : -EIO;
    if (r == 0) {
        CHECK(cJSON_AddStringToObject(ans, "kind", "TokenRequest"));
        CHECK(cJSON_AddStringToObject(ans, "apiVersion", "authentication.k8s.io/v1"));
        apiserver__reply(c, 201, ans);
    } else if (r == -EINVAL) {
        apiserver__reply_status(
            c, api_status_invalid("TokenRequest", "authentication.k8s.io", c->ri.name, &errs));
    } else if (r == -EBADMSG) {
        apiserver__reply_status(c, st);
    } else {
        apiserver__reply_status(c, api_status_from_errno(r, why.len ? why.buf : NULL, NULL));
    }
out:
    store_item_release(&it);
    cJSON_Delete(sa);
    cJSON_Delete(body);
    field_errors_release(&errs);
    strbuf_release(&why);
}
