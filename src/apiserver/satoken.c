/* Service-account JWTs signed with HMAC-SHA256 (see satoken.h). */
#include "apiserver/satoken.h"

#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/base.h"
#include "base/base64.h"
#include "codec/codec.h"

#define KEY_LEN   ((size_t)32)
#define LEEWAY    60
#define MAX_TOKEN 16384

struct api_satokens {
    unsigned char key[64];
    size_t len;
};

/* The fixed JOSE header: {"alg":"HS256","typ":"JWT"}. */
static const char header[] = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";

struct api_satokens *api_satokens_new(const void *key, size_t len)
{
    struct api_satokens *s;

    if (len < KEY_LEN || len > sizeof(s->key))
        return NULL;
    s = xcalloc(1, sizeof(*s));
    memcpy(s->key, key, len);
    s->len = len;
    return s;
}

void api_satokens_free(struct api_satokens *s)
{
    if (!s)
        return;
    explicit_bzero(s->key, sizeof(s->key));
    free(s);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int api_satokens_load_key(const char *path, struct strbuf *key)
{
    struct strbuf text = STRBUF_INIT;
    unsigned char raw[KEY_LEN];
    char hex[2 * KEY_LEN + 2];
    int r = codec_read_file(path, 4096, &text), fd;

    if (r == 0) {
        size_t n = text.len;
        while (n && (text.buf[n - 1] == '\n' || text.buf[n - 1] == '\r'))
            n--;
        r = n == 2 * KEY_LEN ? 0 : -EINVAL;
        for (size_t i = 0; r == 0 && i < KEY_LEN; i++) {
            int hi = hexval(text.buf[2 * i]), lo = hexval(text.buf[2 * i + 1]);
            if (hi < 0 || lo < 0)
                r = -EINVAL;
            else
                raw[i] = (unsigned char)(hi << 4 | lo);
        }
        if (r == 0)
            strbuf_add(key, raw, KEY_LEN);
        goto out;
    }
    if (r != -ENOENT)
        goto out;
    r = 0;
    if (gnutls_rnd(GNUTLS_RND_KEY, raw, sizeof(raw)) < 0) {
        r = -EIO;
        goto out;
    }
    for (size_t i = 0; i < KEY_LEN; i++)
        (void)snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    hex[2 * KEY_LEN] = '\n';
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        r = -errno;
        goto out;
    }
    if (write(fd, hex, 2 * KEY_LEN + 1) != (ssize_t)(2 * KEY_LEN + 1))
        r = -EIO;
    if (close(fd) < 0 && r == 0)
        r = -errno;
    if (r == 0)
        strbuf_add(key, raw, KEY_LEN);
out:
    explicit_bzero(raw, sizeof(raw));
    strbuf_release(&text);
    return r;
}

static void sign(const struct api_satokens *s, const char *data, size_t len, struct strbuf *out)
{
    unsigned char mac[32];

    CHECK(gnutls_hmac_fast(GNUTLS_MAC_SHA256, s->key, s->len, data, len, mac) == 0);
    base64url_encode(mac, sizeof(mac), out);
}

/* ,"<key>":{"name":..,"uid":..} for a bound object, nothing for none. */
static void add_ref(struct strbuf *claims, const char *key, const struct api_satoken_ref *ref)
{
    if (!ref->name)
        return;
    strbuf_addf(claims, ",\"%s\":{\"name\":", key);
    strbuf_add_json_str(claims, ref->name);
    strbuf_addstr(claims, ",\"uid\":");
    strbuf_add_json_str(claims, ref->uid ? ref->uid : "");
    strbuf_addch(claims, '}');
}

void api_satokens_issue(const struct api_satokens *s, const char *ns, const char *name,
                        const char *uid, const struct api_satoken_binding *bound,
                        const char *const *audiences, int64_t now, int64_t seconds,
                        struct strbuf *out)
{
    struct strbuf claims = STRBUF_INIT, sub = STRBUF_INIT, tok = STRBUF_INIT;
    unsigned char rnd[16];
    char jti[37];

    CHECK(gnutls_rnd(GNUTLS_RND_NONCE, rnd, sizeof(rnd)) == 0);
    (void)snprintf(jti, sizeof(jti),
                   "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", rnd[0],
                   rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7], rnd[8], rnd[9], rnd[10],
                   rnd[11], rnd[12], rnd[13], rnd[14], rnd[15]);
    strbuf_addstr(&claims, "{\"aud\":[");
    for (size_t i = 0; audiences[i]; i++) {
        if (i)
            strbuf_addch(&claims, ',');
        strbuf_add_json_str(&claims, audiences[i]);
    }
    strbuf_addf(&claims, "],\"exp\":%" PRId64 ",\"iat\":%" PRId64 ",\"iss\":", now + seconds, now);
    strbuf_add_json_str(&claims, API_SA_ISSUER);
    strbuf_addf(&claims, ",\"jti\":\"%s\",\"kubernetes.io\":{\"namespace\":", jti);
    strbuf_add_json_str(&claims, ns);
    strbuf_addstr(&claims, ",\"serviceaccount\":{\"name\":");
    strbuf_add_json_str(&claims, name);
    strbuf_addstr(&claims, ",\"uid\":");
    strbuf_add_json_str(&claims, uid);
    strbuf_addch(&claims, '}');
    /* kube's order (pkg/serviceaccount/claims.go): serviceaccount, pod, secret, node. */
    if (bound) {
        add_ref(&claims, "pod", &bound->pod);
        add_ref(&claims, "secret", &bound->secret);
        add_ref(&claims, "node", &bound->node);
    }
    strbuf_addf(&claims, "},\"nbf\":%" PRId64 ",\"sub\":", now);
    strbuf_addf(&sub, "system:serviceaccount:%s:%s", ns, name);
    strbuf_add_json_str(&claims, sub.buf);
    strbuf_addch(&claims, '}');

    base64url_encode(header, strlen(header), &tok);
    strbuf_addch(&tok, '.');
    base64url_encode(claims.buf, claims.len, &tok);
    strbuf_reset(&claims);
    sign(s, tok.buf, tok.len, &claims);
    strbuf_addstr(out, tok.buf);
    strbuf_addch(out, '.');
    strbuf_addstr(out, claims.buf);
    strbuf_release(&claims);
    strbuf_release(&sub);
    strbuf_release(&tok);
}

static char *dup_str(const cJSON *o, const char *k)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
    return v ? xstrdup(v) : NULL;
}

void api_satoken_binding_release(struct api_satoken_binding *b)
{
    if (!b)
        return;
    free(b->pod.name);
    free(b->pod.uid);
    free(b->secret.name);
    free(b->secret.uid);
    free(b->node.name);
    free(b->node.uid);
    *b = (struct api_satoken_binding){0};
}

/* A bound-object claim: absent is fine, present needs a name and a uid. */
static int read_ref(const cJSON *k8s, const char *key, struct api_satoken_ref *ret)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(k8s, key);

    if (!o)
        return 0;
    ret->name = dup_str(o, "name");
    ret->uid = dup_str(o, "uid");
    return ret->name && *ret->name && ret->uid && *ret->uid ? 0 : -EINVAL;
}

void api_satoken_claims_release(struct api_satoken_claims *c)
{
    if (!c)
        return;
    api_satoken_binding_release(&c->bound);
    free(c->ns);
    free(c->name);
    free(c->uid);
    free(c->jti);
    for (size_t i = 0; c->audiences && c->audiences[i]; i++)
        free(c->audiences[i]);
    free(c->audiences);
    *c = (struct api_satoken_claims){0};
}

int api_satokens_verify(const struct api_satokens *s, const char *token,
                        const char *const *audiences, int64_t now, struct api_satoken_claims *ret,
                        struct strbuf *why)
{
    static const char *const api_aud[] = {API_SA_ISSUER, NULL};
    const char *d1, *d2;
    struct strbuf want = STRBUF_INIT, part = STRBUF_INIT, hdr = STRBUF_INIT;
    struct api_satoken_claims c = {0};
    cJSON *claims = NULL, *aud, *a, *k8s, *sa;
    size_t n = 0;
    int r = -EINVAL;
    bool aud_ok = false;

    if (!audiences || !*audiences)
        audiences = api_aud;
    if (!s || strlen(token) > MAX_TOKEN || !(d1 = strchr(token, '.')) ||
        !(d2 = strchr(d1 + 1, '.')) || strchr(d2 + 1, '.'))
        goto out;
    strbuf_add(&part, token, (size_t)(d1 - token));
    if (base64url_decode(part.buf, &hdr) < 0 || hdr.len != strlen(header) ||
        memcmp(hdr.buf, header, hdr.len))
        goto out; /* not one of ours */
    r = -EACCES;
    sign(s, token, (size_t)(d2 - token), &want);
    if (want.len != strlen(d2 + 1) || gnutls_memcmp(want.buf, d2 + 1, want.len)) {
        strbuf_addstr(why, "invalid signature");
        goto out;
    }
    strbuf_reset(&part);
    strbuf_add(&part, d1 + 1, (size_t)(d2 - d1 - 1));
    strbuf_reset(&hdr);
    if (base64url_decode(part.buf, &hdr) < 0 ||
        json_parse(hdr.buf, hdr.len, NULL, &claims, NULL) < 0) {
        strbuf_addstr(why, "malformed claims");
        goto out;
    }
    k8s = cJSON_GetObjectItemCaseSensitive(claims, "kubernetes.io");
    sa = cJSON_GetObjectItemCaseSensitive(k8s, "serviceaccount");
    c.ns = dup_str(k8s, "namespace");
    c.name = dup_str(sa, "name");
    c.uid = dup_str(sa, "uid");
    c.jti = dup_str(claims, "jti");
    if (!c.ns || !c.name || !c.uid || !cJSON_IsNumber(cJSON_GetObjectItem(claims, "exp")) ||
        !cJSON_IsNumber(cJSON_GetObjectItem(claims, "nbf")) ||
        read_ref(k8s, "pod", &c.bound.pod) < 0 || read_ref(k8s, "secret", &c.bound.secret) < 0 ||
        read_ref(k8s, "node", &c.bound.node) < 0) {
        strbuf_addstr(why, "malformed claims");
        goto out;
    }
    c.exp = (int64_t)cJSON_GetObjectItem(claims, "exp")->valuedouble;
    if (now >= c.exp + LEEWAY) {
        strbuf_addstr(why, "service account token has expired");
        goto out;
    }
    if (now + LEEWAY < (int64_t)cJSON_GetObjectItem(claims, "nbf")->valuedouble) {
        strbuf_addstr(why, "service account token is not valid yet");
        goto out;
    }
    aud = cJSON_GetObjectItemCaseSensitive(claims, "aud");
    c.audiences = xcalloc((size_t)cJSON_GetArraySize(aud) + 1, sizeof(char *));
    cJSON_ArrayForEach(a, aud)
    {
        if (!cJSON_IsString(a))
            continue;
        c.audiences[n++] = xstrdup(a->valuestring);
        for (const char *const *w = audiences; *w; w++)
            aud_ok |= !strcmp(*w, a->valuestring);
    }
    if (!aud_ok) {
        strbuf_addstr(why, "token audiences is invalid for the target audiences");
        goto out;
    }
    *ret = c;
    c = (struct api_satoken_claims){0};
    r = 0;
out:
    api_satoken_claims_release(&c);
    cJSON_Delete(claims);
    strbuf_release(&want);
    strbuf_release(&part);
    strbuf_release(&hdr);
    return r;
}
