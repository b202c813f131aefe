/*
 * /validate-configmap (manager-behaviour.md 1.7; upstream pkg/webhook/cm): the
 * slo-controller-config checks `koord slo check` runs (slo/slo.h), on the keys a create or an
 * update changes, with real Nodes for the overlap check. Other ConfigMaps pass, as does DELETE
 * (upstream only logs it). A refusal is HTTP 400 with upstream's message form
 * `___{"reason":"<Reason>","message":"<what>"}___`, the reason taken from the check that
 * failed (ParseConfigFail, NodeStrategiesOverlap, ExistNodeConflict, else ConfigParamInvalid);
 * the network-QoS checks, which upstream words as plain text, stay plain.
 */
#include <errno.h>
#include <string.h>

#include "api/field.h"
#include "base/base.h"
#include "codec/codec.h"
#include "manager/webhook/webhook-int.h"
#include "slo/slo.h"

static const char *const reasons[] = {"ParseConfigFail", "NodeStrategiesOverlap",
                                      "ExistNodeConflict"};

static void word(const struct field_error *fe, struct strbuf *msg)
{
    struct strbuf text = STRBUF_INIT;
    const char *reason = "ConfigParamInvalid", *detail = fe->detail ? fe->detail : "";
    cJSON *o;

    if (strstr(detail, "networkQOS")) {
        field_error_format(fe, msg);
        return;
    }
    for (size_t i = 0; i < ARRAY_SIZE(reasons); i++) {
        size_t len = strlen(reasons[i]);
        if (!strncmp(detail, reasons[i], len) && detail[len] == ':') {
            reason = reasons[i];
            detail += len + 1 + (detail[len + 1] == ' ');
        }
    }
    {
        /* The reason moves out of the detail into its own member. */
        struct field_error bare = *fe;
        bare.detail = (char *)detail;
        field_error_format(&bare, &text);
    }
    CHECK(o = cJSON_CreateObject());
    CHECK(cJSON_AddStringToObject(o, "reason", reason));
    CHECK(cJSON_AddStringToObject(o, "message", text.buf));
    strbuf_reset(&text);
    CHECK(json_print(o, &text) == 0);
    strbuf_addf(msg, "___%s___", text.buf);
    cJSON_Delete(o);
    strbuf_release(&text);
}

int webhook__validate_configmap(const struct webhook_config *cfg,
                                const struct webhook__request *req, const struct webhook_data *d,
                                struct webhook__result *res)
{
    const char *ns = cfg->config_namespace ? cfg->config_namespace : SLO_DEFAULT_NAMESPACE;
    const char *name = cfg->config_name ? cfg->config_name : SLO_DEFAULT_NAME;
    const cJSON *obj = req->object ? req->object : req->old_object;
    struct field_errors errs = FIELD_ERRORS_INIT;
    int r = 0;

    if (strcmp(req->resource, "configmaps") || *req->group || *req->subresource || !obj)
        return 0;
    if (strcmp(webhook__meta_str(obj, "name")[0] ? webhook__meta_str(obj, "name") : req->name,
               name) ||
        strcmp(webhook__meta_str(obj, "namespace")[0] ? webhook__meta_str(obj, "namespace")
                                                      : req->namespace,
               ns))
        return 0;
    if (strcmp(req->operation, "CREATE") && strcmp(req->operation, "UPDATE"))
        return 0;
    if (!req->object) {
        strbuf_addstr(&res->msg, "the request has no ConfigMap object");
        return -EINVAL;
    }
    if (slo_config_validate_changed(
            cJSON_GetObjectItemCaseSensitive(req->object, "data"),
            req->old_object ? cJSON_GetObjectItemCaseSensitive(req->old_object, "data") : NULL,
            d->nodes, d->nnodes, cfg->node_strategy_name_check, &errs) > 0) {
        word(&errs.v[0], &res->msg); /* the first error rejects, as upstream */
        r = -EACCES;
    }
    field_errors_release(&errs);
    return r;
}
