/* Certificate generation with GnuTLS (see tls.h). */
#include "http/tls.h"

#include <arpa/inet.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"

void tls_pem_release(struct tls_pem *p)
{
    if (!p)
        return;
    free(p->cert);
    free(p->key);
    p->cert = p->key = NULL;
}

static int gnutls_err(int rc)
{
    return rc == GNUTLS_E_MEMORY_ERROR ? -ENOMEM : -EIO;
}

/* Copies a gnutls datum into a NUL-terminated string. */
static char *datum_str(const gnutls_datum_t *d)
{
    return cstrndup((const char *)d->data, d->size);
}

static int export_pem(gnutls_x509_crt_t crt, gnutls_x509_privkey_t key, struct tls_pem *ret)
{
    gnutls_datum_t c = {0}, k = {0};
    int rc;

    rc = gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &c);
    if (rc >= 0)
        rc = gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &k);
    if (rc < 0) {
        gnutls_free(c.data);
        gnutls_free(k.data);
        return gnutls_err(rc);
    }
    ret->cert = datum_str(&c);
    ret->key = datum_str(&k);
    gnutls_free(c.data);
    gnutls_free(k.data);
    if (!ret->cert || !ret->key) {
        tls_pem_release(ret);
        return -ENOMEM;
    }
    return 0;
}

/* A fresh key and a certificate shell: version 3, random serial, validity, the key. */
static int new_cert(unsigned days, gnutls_x509_crt_t *ret_crt, gnutls_x509_privkey_t *ret_key)
{
    unsigned char serial[16];
    time_t now = time(NULL);
    int rc;

    if ((rc = gnutls_x509_privkey_init(ret_key)) < 0)
        return gnutls_err(rc);
    if ((rc = gnutls_x509_crt_init(ret_crt)) < 0) {
        gnutls_x509_privkey_deinit(*ret_key);
        return gnutls_err(rc);
    }
    rc = gnutls_x509_privkey_generate(*ret_key, GNUTLS_PK_ECDSA,
                                      GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0);
    if (rc >= 0)
        rc = gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof(serial));
    if (rc >= 0) {
        serial[0] &= 0x7f; /* a positive integer */
        rc = gnutls_x509_crt_set_serial(*ret_crt, serial, sizeof(serial));
    }
    if (rc >= 0)
        rc = gnutls_x509_crt_set_version(*ret_crt, 3);
    if (rc >= 0)
        rc = gnutls_x509_crt_set_activation_time(*ret_crt, now - 3600);
    if (rc >= 0)
        rc = gnutls_x509_crt_set_expiration_time(*ret_crt, now + (time_t)days * 86400);
    if (rc >= 0)
        rc = gnutls_x509_crt_set_key(*ret_crt, *ret_key);
    if (rc < 0) {
        gnutls_x509_crt_deinit(*ret_crt);
        gnutls_x509_privkey_deinit(*ret_key);
        return gnutls_err(rc);
    }
    return 0;
}

int tls_make_ca(const char *cn, unsigned days, struct tls_pem *ret)
{
    gnutls_x509_crt_t crt;
    gnutls_x509_privkey_t key;
    int rc, r;

    if ((r = new_cert(days, &crt, &key)) < 0)
        return r;
    rc = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn, strlen(cn));
    if (rc >= 0)
        rc = gnutls_x509_crt_set_basic_constraints(crt, 1, -1);
    if (rc >= 0)
        rc = gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN |
                                                    GNUTLS_KEY_DIGITAL_SIGNATURE);
    if (rc >= 0)
        rc = gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0);
    r = rc < 0 ? gnutls_err(rc) : export_pem(crt, key, ret);
    gnutls_x509_crt_deinit(crt);
    gnutls_x509_privkey_deinit(key);
    return r;
}

static int import_ca(const struct tls_pem *ca, gnutls_x509_crt_t *crt, gnutls_x509_privkey_t *key)
{
    gnutls_datum_t c = {(unsigned char *)ca->cert, (unsigned)strlen(ca->cert)};
    gnutls_datum_t k = {(unsigned char *)ca->key, (unsigned)strlen(ca->key)};
    int rc;

    if ((rc = gnutls_x509_crt_init(crt)) < 0)
        return gnutls_err(rc);
    if ((rc = gnutls_x509_privkey_init(key)) < 0) {
        gnutls_x509_crt_deinit(*crt);
        return gnutls_err(rc);
    }
    rc = gnutls_x509_crt_import(*crt, &c, GNUTLS_X509_FMT_PEM);
    if (rc >= 0)
        rc = gnutls_x509_privkey_import(*key, &k, GNUTLS_X509_FMT_PEM);
    if (rc < 0) {
        gnutls_x509_crt_deinit(*crt);
        gnutls_x509_privkey_deinit(*key);
        return -EINVAL;
    }
    return 0;
}

static int add_san(gnutls_x509_crt_t crt, const char *san)
{
    unsigned char ip[16];
    int rc;

    if (inet_pton(AF_INET, san, ip) == 1)
        rc = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, ip, 4,
                                                  GNUTLS_FSAN_APPEND);
    else if (inet_pton(AF_INET6, san, ip) == 1)
        rc = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, ip, 16,
                                                  GNUTLS_FSAN_APPEND);
    else if (*san && !strpbrk(san, " /@:"))
        rc = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, san,
                                                  (unsigned)strlen(san), GNUTLS_FSAN_APPEND);
    else
        return -EINVAL;
    return rc < 0 ? gnutls_err(rc) : 0;
}

int tls_make_cert(const struct tls_pem *ca, const char *cn, const char *const *orgs,
                  const char *const *sans, bool server, unsigned days, struct tls_pem *ret)
{
    gnutls_x509_crt_t crt, ca_crt;
    gnutls_x509_privkey_t key, ca_key;
    int rc = 0, r;

    if ((r = import_ca(ca, &ca_crt, &ca_key)) < 0)
        return r;
    if ((r = new_cert(days, &crt, &key)) < 0)
        goto out_ca;
    rc = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn, strlen(cn));
    for (const char *const *o = orgs; rc >= 0 && o && *o; o++)
        rc = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_ORGANIZATION_NAME, 0, *o,
                                           strlen(*o));
    if (rc >= 0)
        rc = gnutls_x509_crt_set_basic_constraints(crt, 0, -1);
    if (rc >= 0)
        rc = gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE |
                                                    GNUTLS_KEY_KEY_ENCIPHERMENT);
    if (rc >= 0)
        rc = gnutls_x509_crt_set_key_purpose_oid(
            crt, server ? GNUTLS_KP_TLS_WWW_SERVER : GNUTLS_KP_TLS_WWW_CLIENT, 0);
    if (rc < 0) {
        r = gnutls_err(rc);
        goto out;
    }
    for (const char *const *s = sans; s && *s; s++)
        if ((r = add_san(crt, *s)) < 0)
            goto out;
    rc = gnutls_x509_crt_sign2(crt, ca_crt, ca_key, GNUTLS_DIG_SHA256, 0);
    r = rc < 0 ? gnutls_err(rc) : export_pem(crt, key, ret);
out:
    gnutls_x509_crt_deinit(crt);
    gnutls_x509_privkey_deinit(key);
out_ca:
    gnutls_x509_crt_deinit(ca_crt);
    gnutls_x509_privkey_deinit(ca_key);
    return r;
}

void tls_sha256(const void *data, size_t len, unsigned char ret[32])
{
    CHECK(gnutls_hash_fast(GNUTLS_DIG_SHA256, data, len, ret) == 0);
}

bool tls_cert_covers(const char *cert_pem, const char *const *names)
{
    gnutls_datum_t d = {(unsigned char *)cert_pem, (unsigned)strlen(cert_pem)};
    gnutls_x509_crt_t crt;
    bool ok;

    if (gnutls_x509_crt_init(&crt) < 0)
        return false;
    ok = gnutls_x509_crt_import(crt, &d, GNUTLS_X509_FMT_PEM) >= 0;
    /* An IP address given as text is matched against the IP SANs. */
    for (const char *const *n = names; ok && n && *n; n++)
        ok = gnutls_x509_crt_check_hostname2(crt, *n, 0) != 0;
    gnutls_x509_crt_deinit(crt);
    return ok;
}
