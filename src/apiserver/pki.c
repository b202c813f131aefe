/* PKI files and the admin kubeconfig (see pki.h). */
#include "apiserver/pki.h"

#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"

#define CERT_DAYS 3650

static int write_private(const char *path, const char *data, size_t len)
{
    struct strbuf tmp = STRBUF_INIT;
    int fd, r = 0;

    strbuf_addf(&tmp, "%s.tmp", path);
    fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        r = -errno;
        goto out;
    }
    if (write(fd, data, len) != (ssize_t)len)
        r = -EIO;
    if (r == 0 && fsync(fd) < 0)
        r = -errno;
    if (close(fd) < 0 && r == 0)
        r = -errno;
    if (r == 0 && rename(tmp.buf, path) < 0)
        r = -errno;
    if (r < 0)
        (void)unlink(tmp.buf);
out:
    strbuf_release(&tmp);
    return r;
}

/* Reads <dir>/<name>.crt and .key; -ENOENT when either is missing. */
static int load_pair(const char *dir, const char *name, struct tls_pem *ret)
{
    struct strbuf p = STRBUF_INIT, c = STRBUF_INIT, k = STRBUF_INIT;
    int r;

    strbuf_addf(&p, "%s/%s.crt", dir, name);
    r = codec_read_file(p.buf, 1 << 20, &c);
    if (r == 0) {
        strbuf_reset(&p);
        strbuf_addf(&p, "%s/%s.key", dir, name);
        r = codec_read_file(p.buf, 1 << 20, &k);
    }
    if (r == 0) {
        ret->cert = strbuf_detach(&c, NULL);
        ret->key = strbuf_detach(&k, NULL);
    }
    strbuf_release(&p);
    strbuf_release(&c);
    strbuf_release(&k);
    return r;
}

static int save_pair(const char *dir, const char *name, const struct tls_pem *pem)
{
    struct strbuf p = STRBUF_INIT;
    int r;

    CHECK(pem->key && pem->cert);
    strbuf_addf(&p, "%s/%s.key", dir, name);
    r = write_private(p.buf, pem->key, strlen(pem->key));
    if (r == 0) {
        strbuf_reset(&p);
        strbuf_addf(&p, "%s/%s.crt", dir, name);
        r = write_private(p.buf, pem->cert, strlen(pem->cert));
    }
    strbuf_release(&p);
    return r;
}

static int remove_pair(const char *dir, const char *name)
{
    struct strbuf p = STRBUF_INIT;
    int r = 0;

    for (const char *const *ext = (const char *const[]){"crt", "key", NULL}; *ext; ext++) {
        strbuf_reset(&p);
        strbuf_addf(&p, "%s/%s.%s", dir, name, *ext);
        if (unlink(p.buf) < 0 && errno != ENOENT && r == 0)
            r = -errno;
    }
    strbuf_release(&p);
    return r;
}

/*
 * The CA of dir/file, made (with common name cn) when absent. A new CA invalidates what an older
 * one signed: the pairs named in issued (NULL-terminated) are removed, to be made again.
 */
static int ca_pair(const char *dir, const char *file, const char *cn, const char *const *issued,
                   struct tls_pem *ret)
{
    int r = load_pair(dir, file, ret);

    if (r != -ENOENT)
        return r;
    r = tls_make_ca(cn, CERT_DAYS, ret);
    if (r == 0)
        r = save_pair(dir, file, ret);
    for (; r == 0 && *issued; issued++)
        r = remove_pair(dir, *issued);
    return r;
}

/*
 * The serving pair dir/file signed by ca for the names sans (NULL-terminated; sans[host_at] is
 * this machine's host name). A stored certificate that lacks a name asked for now is made again;
 * the host name is not required of it (it may have changed, and clients use the others), and a
 * host name that is not a DNS name is left out of a new one.
 */
static int serving_pair(const char *dir, const struct tls_pem *ca, const char *file, const char *cn,
                        const char **sans, size_t host_at, struct tls_pem *ret)
{
    const char *host = sans[host_at];
    int r = load_pair(dir, file, ret);

    if (r == 0) {
        sans[host_at] = NULL;
        if (!tls_cert_covers(ret->cert, sans)) {
            tls_pem_release(ret);
            r = -ENOENT;
        }
        sans[host_at] = host;
    }
    if (r != -ENOENT)
        return r;
    r = tls_make_cert(ca, cn, NULL, sans, true, CERT_DAYS, ret);
    if (r == -EINVAL) {
        sans[host_at] = NULL;
        r = tls_make_cert(ca, cn, NULL, sans, true, CERT_DAYS, ret);
        sans[host_at] = host;
    }
    if (r == 0)
        r = save_pair(dir, file, ret);
    return r;
}

int apiserver_pki_load(const char *dir, struct apiserver_pki *ret)
{
    static const char *const admin_groups[] = {"system:masters", NULL};
    struct apiserver_pki p = {0};
    char host[256] = "localhost";
    const char *sans[] = {"localhost", "127.0.0.1", "::1", host, NULL};
    int r;

    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return -errno;
    (void)gethostname(host, sizeof(host) - 1);
    r = ca_pair(dir, "ca", "koord-ca", (const char *const[]){"apiserver", "admin", NULL}, &p.ca);
    if (r == 0)
        r = serving_pair(dir, &p.ca, "apiserver", "koord-apiserver", sans, 3, &p.serving);
    if (r == 0 && (r = load_pair(dir, "admin", &p.admin)) == -ENOENT) {
        r = tls_make_cert(&p.ca, "admin", admin_groups, NULL, false, CERT_DAYS, &p.admin);
        if (r == 0)
            r = save_pair(dir, "admin", &p.admin);
    }
    if (r == 0)
        r = ca_pair(dir, "front-proxy-ca", "front-proxy-ca",
                    (const char *const[]){"front-proxy-client", NULL}, &p.front_proxy_ca);
    if (r == 0 && (r = load_pair(dir, "front-proxy-client", &p.front_proxy_client)) == -ENOENT) {
        r = tls_make_cert(&p.front_proxy_ca, "front-proxy-client", NULL, NULL, false, CERT_DAYS,
                          &p.front_proxy_client);
        if (r == 0)
            r = save_pair(dir, "front-proxy-client", &p.front_proxy_client);
    }
    if (r < 0) {
        apiserver_pki_release(&p);
        return r;
    }
    *ret = p;
    return 0;
}

int apiserver_pki_serving(const char *dir, const char *name, const char *const *dns_names,
                          struct tls_pem *ret_ca, struct tls_pem *ret_serving)
{
    struct tls_pem ca = {0}, serving = {0};
    struct strbuf ca_name = STRBUF_INIT;
    char host[256] = "localhost";
    const char *sans[16] = {"localhost", "127.0.0.1", "::1"};
    size_t nsans = 3, host_at;
    int r;

    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return -errno;
    for (const char *const *n = dns_names; n && *n; n++) {
        if (nsans + 2 >= ARRAY_SIZE(sans))
            return -EINVAL;
        sans[nsans++] = *n;
    }
    (void)gethostname(host, sizeof(host) - 1);
    host_at = nsans;
    sans[nsans++] = host;
    strbuf_addf(&ca_name, "%s-ca", name);
    r = ca_pair(dir, ca_name.buf, ca_name.buf, (const char *const[]){name, NULL}, &ca);
    if (r == 0)
        r = serving_pair(dir, &ca, name, name, sans, host_at, &serving);
    strbuf_release(&ca_name);
    if (r < 0) {
        tls_pem_release(&ca);
        tls_pem_release(&serving);
        return r;
    }
    *ret_ca = ca;
    *ret_serving = serving;
    return 0;
}

void apiserver_pki_release(struct apiserver_pki *p)
{
    tls_pem_release(&p->ca);
    tls_pem_release(&p->serving);
    tls_pem_release(&p->admin);
    tls_pem_release(&p->front_proxy_ca);
    tls_pem_release(&p->front_proxy_client);
}

static int b64(const char *s, struct strbuf *out)
{
    gnutls_datum_t in = {(unsigned char *)s, (unsigned)strlen(s)}, enc = {0};

    if (gnutls_base64_encode2(&in, &enc) < 0)
        return -ENOMEM;
    strbuf_add(out, enc.data, enc.size);
    gnutls_free(enc.data);
    return 0;
}

int apiserver_write_kubeconfig(const char *path, const char *server,
                               const struct apiserver_pki *pki)
{
    struct strbuf y = STRBUF_INIT;
    int r;

    strbuf_addf(&y,
                "apiVersion: v1\nkind: Config\nclusters:\n- name: koord\n  cluster:\n"
                "    server: %s\n    certificate-authority-data: ",
                server);
    r = b64(pki->ca.cert, &y);
    strbuf_addstr(&y, "\nusers:\n- name: admin\n  user:\n    client-certificate-data: ");
    if (r == 0)
        r = b64(pki->admin.cert, &y);
    strbuf_addstr(&y, "\n    client-key-data: ");
    if (r == 0)
        r = b64(pki->admin.key, &y);
    strbuf_addstr(&y, "\ncontexts:\n- name: koord\n  context:\n    cluster: koord\n"
                      "    user: admin\ncurrent-context: koord\n");
    if (r == 0)
        r = write_private(path, y.buf, y.len);
    strbuf_release(&y);
    return r;
}
