/*
 * discovery.k8s.io/v1 EndpointSlice (pkg/apis/discovery/validation, kubernetes 1.33). koord
 * runs no EndpointSlice controller: slices are stored as clients write them.
 */
#include <arpa/inet.h>
#include <string.h>

#include "api/api.h"
#include "api/labels.h"
#include "base/base.h"

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *c = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
    return cJSON_IsNull(c) ? NULL : c;
}

#define MAX_ENDPOINTS 1000
#define MAX_ADDRESSES 100
#define MAX_PORTS     100

static const struct api_prop endpoint_conditions_props[] = {
    {"ready", &api_bool},
    {"serving", &api_bool},
    {"terminating", &api_bool},
    {NULL},
};

static const struct api_prop endpoint_props[] = {
    {"addresses", &api_string_list, API_ALWAYS},
    {"conditions", API_OBJ(endpoint_conditions_props), API_ALWAYS},
    {"hostname", &api_string},
    {"targetRef", &api_object_reference},
    {"deprecatedTopology", &api_string_map},
    {"nodeName", &api_string},
    {"zone", &api_string},
    {"hints", &api_preserve_object},
    {NULL},
};

static const struct api_prop endpoint_port_props[] = {
    {"name", &api_string},
    {"protocol", API_ENUM("TCP", "UDP", "SCTP")},
    {"port", &api_int32},
    {"appProtocol", &api_string},
    {NULL},
};

/* ValidateEndpointSlice: addresses of the slice's type, bounded lists. */
static void check_endpoint_slice(const struct api_schema *s, const cJSON *o, struct api_walk *w)
{
    const cJSON *type = get(o, "addressType"), *eps = get(o, "endpoints"), *ep;
    const char *t = cJSON_IsString(type) ? type->valuestring : "";
    long i = 0;
    (void)s;

    if (!*t)
        api_walk_error(w, "addressType", FIELD_REQUIRED, NULL, NULL);
    if (cJSON_GetArraySize(eps) > MAX_ENDPOINTS)
        api_walk_error(w, "endpoints", FIELD_TOO_MANY, NULL, "must have at most %d items",
                       MAX_ENDPOINTS);
    if (cJSON_GetArraySize(get(o, "ports")) > MAX_PORTS)
        api_walk_error(w, "ports", FIELD_TOO_MANY, NULL, "must have at most %d items", MAX_PORTS);
    cJSON_ArrayForEach(ep, eps)
    {
        const cJSON *addrs = get(ep, "addresses"), *a;
        size_t len = api_walk_push(w, "endpoints", 0);
        long j = 0;

        (void)api_walk_push(w, NULL, i++);
        if (cJSON_GetArraySize(addrs) == 0)
            api_walk_error(w, "addresses", FIELD_REQUIRED, NULL, "must contain at least 1 address");
        else if (cJSON_GetArraySize(addrs) > MAX_ADDRESSES)
            api_walk_error(w, "addresses", FIELD_TOO_MANY, NULL, "must have at most %d items",
                           MAX_ADDRESSES);
        cJSON_ArrayForEach(a, addrs)
        {
            unsigned char buf[16];
            struct strbuf why = STRBUF_INIT;
            size_t l2 = api_walk_push(w, "addresses", 0);
            bool bad = false;
            (void)api_walk_push(w, NULL, j++);
            if (!cJSON_IsString(a)) {
                api_walk_pop(w, l2);
                continue;
            }
            if (!strcmp(t, "IPv4"))
                bad = inet_pton(AF_INET, a->valuestring, buf) != 1;
            else if (!strcmp(t, "IPv6"))
                bad = inet_pton(AF_INET6, a->valuestring, buf) != 1;
            else if (!strcmp(t, "FQDN"))
                bad = labels_check_dns1123_subdomain(a->valuestring, &why) < 0;
            if (bad)
                api_walk_error(w, NULL, FIELD_INVALID, a, "%s",
                               why.len ? why.buf : "must be a valid IP address");
            strbuf_release(&why);
            api_walk_pop(w, l2);
        }
        api_walk_pop(w, len);
    }
}

static const struct api_prop endpoint_slice_props[] = {
    {"addressType", API_ENUM("IPv4", "IPv6", "FQDN"), API_ALWAYS},
    {"endpoints", API_ARR(API_OBJ(endpoint_props)), API_ALWAYS},
    {"ports", API_ARR(API_OBJ(endpoint_port_props))},
    {NULL},
};

/* ValidateEndpointSliceUpdate: the address type is fixed. */
static void check_endpoint_slice_update(const cJSON *old, const cJSON *obj,
                                        struct field_errors *errs)
{
    const cJSON *a = get(old, "addressType"), *b = get(obj, "addressType");

    if (cJSON_IsString(a) && cJSON_IsString(b) && strcmp(a->valuestring, b->valuestring)) {
        struct strbuf v = STRBUF_INIT;
        strbuf_add_json_str(&v, b->valuestring);
        field_error_add(errs, FIELD_INVALID, "addressType", v.buf, "field is immutable");
        strbuf_release(&v);
    }
}

const struct api_kind api_kind_endpoint_slice = {
    .group = "discovery.k8s.io",
    .version = "v1",
    .kind = "EndpointSlice",
    .plural = "endpointslices",
    .namespaced = true,
    .extra = endpoint_slice_props,
    .check = check_endpoint_slice,
    .check_update = check_endpoint_slice_update,
};
