/*
 * Helpers of the webhook table tests (tests/manager/test_webhook_*.c): building an
 * AdmissionReview request, running webhook_review() and reading its response back — the
 * result, and the mutated object obtained by applying the returned JSON Patch to the object
 * sent, which is what an API server does with it. Include after <cmocka.h> and testutil.h.
 */
#ifndef KOORD_TESTS_MANAGER_WEBHOOKTEST_H
#define KOORD_TESTS_MANAGER_WEBHOOKTEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "codec/codec.h"
#include "codec/patch.h"
#include "manager/webhook/webhook.h"

/* Standard base64 (with padding) decoding; fails the test on bad input. */
static inline void wt_b64_decode(const char *in, struct strbuf *out)
{
    static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned acc = 0;
    int bits = 0;

    for (const char *p = in; *p && *p != '='; p++) {
        const char *c = strchr(alpha, *p);
        if (!c || !*p)
            fail_msg("bad base64 %s", in);
        acc = (acc << 6) | (unsigned)(c - alpha);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            strbuf_addch(out, (char)((acc >> bits) & 0xff));
        }
    }
}

/* An AdmissionReview request; object and old are JSON text or NULL. */
static inline cJSON *wt_review(const char *op, const char *group, const char *resource,
                               const char *sub, const char *ns, const char *object, const char *old)
{
    struct strbuf s = STRBUF_INIT;
    cJSON *r;

    strbuf_addf(&s,
                "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                "\"request\":{\"uid\":\"u-1\",\"operation\":\"%s\",\"resource\":{\"group\":\"%s\","
                "\"version\":\"v1\",\"resource\":\"%s\"},\"subResource\":\"%s\","
                "\"namespace\":\"%s\",\"object\":%s,\"oldObject\":%s}}",
                op, group, resource, sub, ns, object ? object : "null", old ? old : "null");
    r = J(s.buf);
    strbuf_release(&s);
    return r;
}

struct wt_out {
    bool allowed;
    int code;           /* result.code, 0 when absent */
    char message[4096]; /* result.message */
    cJSON *object;      /* the object sent with the patch applied (NULL without an object) */
    bool patched;       /* a patch came back */
};

/* Runs path on review (freed here) and decodes the response; object is the object sent. */
static inline void wt_run(const struct webhook_config *cfg, const char *path, cJSON *review,
                          const struct webhook_data *d, struct wt_out *out)
{
    struct strbuf err = STRBUF_INIT, patch = STRBUF_INIT;
    cJSON *resp = NULL, *r, *obj;
    const char *p;

    memset(out, 0, sizeof(*out));
    assert_int_equal(webhook_review(cfg, path, review, d, &resp, &err), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(resp, "kind")), "AdmissionReview");
    r = cJSON_GetObjectItem(resp, "response");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(r, "uid")), "u-1");
    out->allowed = cJSON_IsTrue(cJSON_GetObjectItem(r, "allowed"));
    {
        const cJSON *code = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "status"), "code");
        out->code = cJSON_IsNumber(code) ? code->valueint : 0;
    }
    p = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "status"), "message"));
    (void)snprintf(out->message, sizeof(out->message), "%s", p ? p : "");
    obj = cJSON_GetObjectItem(cJSON_GetObjectItem(review, "request"), "object");
    if (cJSON_IsObject(obj)) {
        out->object = cJSON_Duplicate(obj, true);
        p = cJSON_GetStringValue(cJSON_GetObjectItem(r, "patch"));
        if (p) {
            cJSON *ops;
            assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(r, "patchType")),
                                "JSONPatch");
            wt_b64_decode(p, &patch);
            ops = J(patch.buf);
            assert_int_equal(json_patch_apply(&out->object, ops, 10000, NULL), 0);
            cJSON_Delete(ops);
            out->patched = true;
        }
    }
    cJSON_Delete(resp);
    cJSON_Delete(review);
    strbuf_release(&err);
    strbuf_release(&patch);
}

static inline void wt_out_release(struct wt_out *out)
{
    cJSON_Delete(out->object);
    out->object = NULL;
}

#endif
