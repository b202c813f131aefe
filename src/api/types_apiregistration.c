/*
 * apiregistration.k8s.io/v1 APIService: the object that tells an API server to proxy one
 * group-version to another server (the aggregation layer, reference kubernetes-api.md 6.1).
 * Fields, defaults (service.port 443) and validation follow kube-aggregator's
 * pkg/apis/apiregistration/v1/types.go, v1/defaults.go and validation/validation.go.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "api/labels.h"
#include "api/schema.h"
#include "base/base.h"

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNull(c) ? NULL : c;
}

static const char *get_str(const cJSON *o, const char *k)
{
    const cJSON *c = get(o, k);
    return cJSON_IsString(c) ? c->valuestring : "";
}

static double get_num(const cJSON *o, const char *k)
{
    const cJSON *c = get(o, k);
    return cJSON_IsNumber(c) ? c->valuedouble : 0;
}

/* apimachinery IsDNS1035Label: what an API version must be. */
static bool is_dns1035_label(const char *s, struct strbuf *why)
{
    size_t n = strlen(s);
    bool ok = n > 0 && s[0] >= 'a' && s[0] <= 'z' &&
              ((s[n - 1] >= 'a' && s[n - 1] <= 'z') || (s[n - 1] >= '0' && s[n - 1] <= '9'));

    for (size_t i = 0; ok && i < n; i++)
        ok = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-';
    if (n > 63)
        strbuf_addstr(why, "must be no more than 63 characters");
    if (!ok)
        strbuf_addf(why,
                    "%sa DNS-1035 label must consist of lower case alphanumeric characters or "
                    "'-', start with an alphabetic character, and end with an alphanumeric "
                    "character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
                    "'[a-z]([-a-z0-9]*[a-z0-9])?')",
                    why->len ? "; " : "");
    return ok && n <= 63;
}

/* apimachinery path.IsValidPathSegmentName: the name rule of APIServices. */
static bool is_path_segment_name(const char *s, struct strbuf *why)
{
    if (!strcmp(s, ".") || !strcmp(s, ".."))
        strbuf_addf(why, "may not be '%s'", s);
    if (strchr(s, '/'))
        strbuf_addf(why, "%smay not contain '/'", why->len ? "; " : "");
    if (strchr(s, '%'))
        strbuf_addf(why, "%smay not contain '%%'", why->len ? "; " : "");
    return why->len == 0;
}

static void add_invalid_number(struct api_walk *w, const char *field, double v, const char *msg)
{
    cJSON *val = cJSON_CreateNumber(v);

    CHECK(val);
    api_walk_error(w, field, FIELD_INVALID, val, "%s", msg);
    cJSON_Delete(val);
}

/* ValidateAPIService (validation.go), on the whole object: the name depends on the spec. */
static void check_apiservice(const struct api_schema *s, const cJSON *o, struct api_walk *w)
{
    const cJSON *spec = get(o, "spec"), *svc = get(spec, "service"), *name;
    const char *group = get_str(spec, "group"), *version = get_str(spec, "version");
    const char *ca = get_str(spec, "caBundle");
    bool insecure = cJSON_IsTrue(get(spec, "insecureSkipTLSVerify"));
    struct strbuf why = STRBUF_INIT, want = STRBUF_INIT;
    double gpm = get_num(spec, "groupPriorityMinimum"), vp = get_num(spec, "versionPriority");
    (void)s;

    name = get(get(o, "metadata"), "name");
    strbuf_addf(&want, "%s.%s", version, group);
    if (cJSON_IsString(name) && *name->valuestring) {
        if (!is_path_segment_name(name->valuestring, &why))
            api_walk_error(w, "metadata.name", FIELD_INVALID, name, "%s", why.buf);
        else if (strcmp(name->valuestring, want.buf))
            api_walk_error(w, "metadata.name", FIELD_INVALID, name,
                           "must be `spec.version+\".\"+spec.group`: \"%s\"", want.buf);
    }
    strbuf_reset(&why);
    if (!*group && strcmp(version, "v1"))
        api_walk_error(w, "spec.group", FIELD_REQUIRED, NULL,
                       "only v1 may have an empty group and it better be legacy kube");
    if (*group && labels_check_dns1123_subdomain(group, &why) < 0)
        api_walk_error(w, "spec.group", FIELD_INVALID, get(spec, "group"), "%s", why.buf);
    strbuf_reset(&why);
    if (!is_dns1035_label(version, &why)) {
        cJSON *v = cJSON_CreateString(version);
        CHECK(v);
        api_walk_error(w, "spec.version", FIELD_INVALID, v, "%s", why.buf);
        cJSON_Delete(v);
    }
    if (gpm <= 0 || gpm > 20000)
        add_invalid_number(w, "spec.groupPriorityMinimum", gpm,
                           "must be positive and less than 20000");
    if (vp <= 0 || vp > 1000)
        add_invalid_number(w, "spec.versionPriority", vp, "must be positive and less than 1000");
    if (!svc) {
        if (*ca) {
            char bytes[32];
            cJSON *v;
            /* The decoded length, as Go reports len([]byte). */
            (void)snprintf(bytes, sizeof(bytes), "%zu bytes", strlen(ca) / 4 * 3);
            v = cJSON_CreateString(bytes);
            CHECK(v);
            api_walk_error(w, "spec.caBundle", FIELD_INVALID, v,
                           "local APIServices may not have a caBundle");
            cJSON_Delete(v);
        }
        if (insecure)
            api_walk_error(w, "spec.insecureSkipTLSVerify", FIELD_INVALID,
                           get(spec, "insecureSkipTLSVerify"),
                           "local APIServices may not have insecureSkipTLSVerify");
        goto out;
    }
    if (!*get_str(svc, "namespace"))
        api_walk_error(w, "spec.service.namespace", FIELD_REQUIRED, NULL, NULL);
    if (!*get_str(svc, "name"))
        api_walk_error(w, "spec.service.name", FIELD_REQUIRED, NULL, NULL);
    if (get(svc, "port") && (get_num(svc, "port") < 1 || get_num(svc, "port") > 65535))
        add_invalid_number(w, "spec.service.port", get_num(svc, "port"),
                           "port is not valid: must be between 1 and 65535, inclusive");
    if (insecure && *ca)
        api_walk_error(w, "spec.insecureSkipTLSVerify", FIELD_INVALID,
                       get(spec, "insecureSkipTLSVerify"),
                       "may not be true if caBundle is present");
out:
    strbuf_release(&why);
    strbuf_release(&want);
}

/* []byte travels as standard base64; Go's decoder refuses anything else (schema.h). */
void api_check_base64(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    size_t n = 0, pad = 0;
    bool ok = cJSON_IsString(v);
    (void)s;

    for (const char *p = ok ? v->valuestring : ""; ok && *p; p++) {
        if (*p == '\r' || *p == '\n')
            continue;
        if (*p == '=')
            pad++;
        else
            ok = pad == 0 && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                              (*p >= '0' && *p <= '9') || *p == '+' || *p == '/');
        n++;
    }
    if (!ok || n % 4 != 0 || pad > 2)
        api_walk_error(w, NULL, FIELD_INVALID, NULL, "illegal base64 data");
}

static const struct api_prop service_reference_props[] = {
    {"namespace", &api_string, API_VAL},
    {"name", &api_string, API_VAL},
    {"port", &api_int32, 0, "443"},
    {NULL},
};

static const struct api_prop apiservice_spec_props[] = {
    {"service", API_OBJ(service_reference_props)},
    {"group", &api_string, API_VAL},
    {"version", &api_string, API_VAL},
    {"insecureSkipTLSVerify", &api_bool, API_VAL},
    {"caBundle",
     &(const struct api_schema){.type = API_STRING, .format = "byte", .check = api_check_base64},
     API_VAL},
    /* Required, but a missing one decodes as 0 and fails the range check, as in Go. */
    {"groupPriorityMinimum", &api_int32, API_ALWAYS},
    {"versionPriority", &api_int32, API_ALWAYS},
    {NULL},
};

static const struct api_prop apiservice_condition_props[] = {
    {"type", &api_string, API_REQ | API_ALWAYS},
    {"status", API_ENUM("True", "False", "Unknown"), API_REQ | API_ALWAYS},
    {"lastTransitionTime", &api_time},
    {"reason", &api_string, API_VAL},
    {"message", &api_string, API_VAL},
    {NULL},
};

static const struct api_prop apiservice_status_props[] = {
    {"conditions", API_ARR(API_OBJ(apiservice_condition_props))},
    {NULL},
};

const struct api_kind api_kind_apiservice = {
    .group = "apiregistration.k8s.io",
    .version = "v1",
    .kind = "APIService",
    .plural = "apiservices",
    .status_subresource = true,
    .name_rule = API_NAME_PATH_SEGMENT,
    .spec = API_OBJ(apiservice_spec_props),
    .status = API_OBJ(apiservice_status_props),
    .check = check_apiservice,
};
