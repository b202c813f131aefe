/*
 * Service resolution and caBundle files for the servers the API server calls (svcref.h):
 * one copy of what the aggregation layer and the admission webhooks both need.
 */
#include "apiserver/svcref.h"

#include <errno.h>
#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "apiserver/store.h"
#include "base/base.h"
#include "codec/codec.h"

#define MAX_CANDIDATES 256 /* endpoint addresses one resolution picks from */

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

static int get_int(const cJSON *o, const char *k, int dflt)
{
    const cJSON *c = get(o, k);
    return cJSON_IsNumber(c) ? c->valueint : dflt;
}

static cJSON *read_object(struct store *store, const char *key)
{
    struct store_item it = {0};
    cJSON *o = NULL;

    if (store_get(store, key, &it) == 0 && json_parse(it.value, it.len, NULL, &o, NULL) == 0 &&
        !cJSON_IsObject(o)) {
        cJSON_Delete(o);
        o = NULL;
    }
    store_item_release(&it);
    return o;
}

static uint32_t random_below(uint32_t n)
{
    uint32_t x = 0;

    if (getrandom(&x, sizeof(x), 0) != (ssize_t)sizeof(x))
        x = (uint32_t)time(NULL);
    return n ? x % n : 0;
}

void svcref_add_host_port(struct strbuf *out, const char *host, int port)
{
    strbuf_addf(out, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
}

enum svcref_fail svcref_resolve(struct store *store, const char *ns, const char *name, int port,
                                struct strbuf *host, int *ret_port, struct strbuf *port_name)
{
    struct strbuf key = STRBUF_INIT;
    cJSON *svc, *ep = NULL;
    const cJSON *p, *subset, *addr;
    const char *pname = NULL;
    struct {
        const char *ip;
        int port;
    } cand[MAX_CANDIDATES];
    size_t n = 0;
    enum svcref_fail ret;

    strbuf_addf(&key, "/core/services/%s/%s", ns, name);
    svc = read_object(store, key.buf);
    if (!svc) {
        ret = SVCREF_NO_SERVICE;
        goto out;
    }
    if (!strcmp(get_str(get(svc, "spec"), "type"), "ExternalName")) {
        strbuf_addstr(host, get_str(get(svc, "spec"), "externalName"));
        *ret_port = port;
        ret = SVCREF_OK;
        goto out;
    }
    cJSON_ArrayForEach(p, get(get(svc, "spec"), "ports"))
    {
        if (get_int(p, "port", 0) == port) {
            pname = get_str(p, "name");
            break;
        }
    }
    if (!pname) {
        ret = SVCREF_NO_PORT;
        goto out;
    }
    if (port_name)
        strbuf_addstr(port_name, pname);
    strbuf_reset(&key);
    strbuf_addf(&key, "/core/endpoints/%s/%s", ns, name);
    ep = read_object(store, key.buf);
    if (!ep) {
        ret = SVCREF_NO_ENDPOINTS;
        goto out;
    }
    cJSON_ArrayForEach(subset, get(ep, "subsets"))
    {
        cJSON_ArrayForEach(p, get(subset, "ports"))
        {
            if (strcmp(get_str(p, "name"), pname))
                continue;
            cJSON_ArrayForEach(addr, get(subset, "addresses"))
            {
                if (n == MAX_CANDIDATES || !*get_str(addr, "ip"))
                    continue;
                cand[n].ip = get_str(addr, "ip");
                cand[n].port = get_int(p, "port", 0);
                n++;
            }
        }
    }
    if (n == 0) {
        ret = SVCREF_NO_ADDRESSES;
        goto out;
    }
    n = random_below((uint32_t)n);
    strbuf_addstr(host, cand[n].ip);
    *ret_port = cand[n].port;
    ret = SVCREF_OK;
out:
    strbuf_release(&key);
    cJSON_Delete(svc);
    cJSON_Delete(ep);
    return ret;
}

char *svcref_write_ca(const char *dir, const char *stem, unsigned seq, const char *b64,
                      const char *what, struct strbuf *why)
{
    struct strbuf clean = STRBUF_INIT, path = STRBUF_INIT;
    gnutls_datum_t in, out = {NULL, 0};
    char *ret = NULL;
    int fd;

    for (const char *p = b64; *p; p++)
        if (*p != '\r' && *p != '\n')
            strbuf_addch(&clean, *p);
    in = (gnutls_datum_t){(unsigned char *)clean.buf, (unsigned)clean.len};
    if (gnutls_base64_decode2(&in, &out) < 0) {
        strbuf_addf(why, "%s is not valid base64", what);
        goto out;
    }
    strbuf_addf(&path, "%s/%s.%u.crt", dir, stem, seq);
    fd = open(path.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        strbuf_addf(why, "cannot write \"%s\": %s", path.buf, err_str(-errno));
        goto out;
    }
    if (write(fd, out.data, out.size) != (ssize_t)out.size) {
        strbuf_addf(why, "cannot write \"%s\"", path.buf);
        (void)close(fd);
        (void)unlink(path.buf);
        goto out;
    }
    if (close(fd) < 0) {
        strbuf_addf(why, "cannot write \"%s\": %s", path.buf, err_str(-errno));
        (void)unlink(path.buf);
        goto out;
    }
    ret = strbuf_detach(&path, NULL);
out:
    gnutls_free(out.data);
    strbuf_release(&clean);
    strbuf_release(&path);
    return ret;
}
