/*
 * Tests for apiserver/pki's serving certificates of other koord servers: the names a
 * certificate is made for (an aggregating API server verifies <service>.<namespace>.svc), that
 * a certificate from an older start lacking a name asked for now is made again under the same
 * CA (so an APIService's caBundle stays valid), that a sufficient one is reused as it is, and
 * that a new CA brings a new certificate.
 */
#include <gnutls/x509.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "apiserver/pki.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "http/tls.h"

static const char *const files[] = {"m.crt", "m.key", "m-ca.crt", "m-ca.key"};

static void remove_dir(const char *dir)
{
    struct strbuf p = STRBUF_INIT;

    for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
        strbuf_reset(&p);
        strbuf_addf(&p, "%s/%s", dir, files[i]);
        (void)unlink(p.buf);
    }
    strbuf_release(&p);
    assert_int_equal(rmdir(dir), 0);
}

static void test_names_covered(void **state)
{
    char dir[] = "/tmp/koord-pki-XXXXXX";
    const char *const svc[] = {"koord-manager.koordinator-system.svc", NULL};
    const char *const local[] = {"localhost", "127.0.0.1", "::1", NULL};
    const char *const other[] = {"other.koordinator-system.svc", NULL};
    const char *const other_ip[] = {"10.0.0.1", NULL};
    struct tls_pem ca = {0}, srv = {0};

    (void)state;
    assert_non_null(mkdtemp(dir));
    assert_int_equal(apiserver_pki_serving(dir, "m", svc, &ca, &srv), 0);
    assert_true(tls_cert_covers(srv.cert, svc));
    assert_true(tls_cert_covers(srv.cert, local));
    assert_false(tls_cert_covers(srv.cert, other));
    assert_false(tls_cert_covers(srv.cert, other_ip));
    assert_false(tls_cert_covers("not a certificate", local));
    tls_pem_release(&ca);
    tls_pem_release(&srv);
    remove_dir(dir);
}

static void test_regenerated_when_a_name_is_missing(void **state)
{
    char dir[] = "/tmp/koord-pki-XXXXXX";
    const char *const svc[] = {"koord-manager.koordinator-system.svc", NULL};
    struct tls_pem ca1 = {0}, srv1 = {0}, ca2 = {0}, srv2 = {0}, ca3 = {0}, srv3 = {0};

    (void)state;
    assert_non_null(mkdtemp(dir));
    /* An older start made the certificate without the service name. */
    assert_int_equal(apiserver_pki_serving(dir, "m", NULL, &ca1, &srv1), 0);
    assert_false(tls_cert_covers(srv1.cert, svc));
    /* Asked for it now: a new certificate, the same CA. */
    assert_int_equal(apiserver_pki_serving(dir, "m", svc, &ca2, &srv2), 0);
    assert_true(tls_cert_covers(srv2.cert, svc));
    assert_string_equal(ca2.cert, ca1.cert);
    assert_string_not_equal(srv2.cert, srv1.cert);
    /* Enough already: reused as it is. */
    assert_int_equal(apiserver_pki_serving(dir, "m", svc, &ca3, &srv3), 0);
    assert_string_equal(srv3.cert, srv2.cert);
    assert_string_equal(srv3.key, srv2.key);
    tls_pem_release(&ca1);
    tls_pem_release(&srv1);
    tls_pem_release(&ca2);
    tls_pem_release(&srv2);
    tls_pem_release(&ca3);
    tls_pem_release(&srv3);
    remove_dir(dir);
}

/* Whether cert_pem carries a valid signature of ca_pem's key. */
static bool signed_by(const char *cert_pem, const char *ca_pem)
{
    gnutls_x509_crt_t cert, ca;
    gnutls_datum_t d;
    unsigned status = 1;
    bool ok;

    assert_int_equal(gnutls_x509_crt_init(&cert), 0);
    assert_int_equal(gnutls_x509_crt_init(&ca), 0);
    d = (gnutls_datum_t){(unsigned char *)cert_pem, (unsigned)strlen(cert_pem)};
    assert_int_equal(gnutls_x509_crt_import(cert, &d, GNUTLS_X509_FMT_PEM), 0);
    d = (gnutls_datum_t){(unsigned char *)ca_pem, (unsigned)strlen(ca_pem)};
    assert_int_equal(gnutls_x509_crt_import(ca, &d, GNUTLS_X509_FMT_PEM), 0);
    ok = gnutls_x509_crt_verify(cert, &ca, 1, GNUTLS_VERIFY_DISABLE_TIME_CHECKS, &status) == 0 &&
         status == 0;
    gnutls_x509_crt_deinit(cert);
    gnutls_x509_crt_deinit(ca);
    return ok;
}

/* The CA lost (its files removed): a new CA, and the serving certificate made again under it,
 * never the old one a client of the new CA (an APIService caBundle) could not verify. */
static void test_new_ca_new_certificate(void **state)
{
    char dir[] = "/tmp/koord-pki-XXXXXX";
    struct tls_pem ca1 = {0}, srv1 = {0}, ca2 = {0}, srv2 = {0};
    struct strbuf p = STRBUF_INIT;

    (void)state;
    assert_non_null(mkdtemp(dir));
    assert_int_equal(apiserver_pki_serving(dir, "m", NULL, &ca1, &srv1), 0);
    assert_true(signed_by(srv1.cert, ca1.cert));
    strbuf_addf(&p, "%s/m-ca.crt", dir);
    assert_int_equal(unlink(p.buf), 0);
    strbuf_reset(&p);
    strbuf_addf(&p, "%s/m-ca.key", dir);
    assert_int_equal(unlink(p.buf), 0);
    assert_int_equal(apiserver_pki_serving(dir, "m", NULL, &ca2, &srv2), 0);
    assert_string_not_equal(ca2.cert, ca1.cert);
    assert_true(signed_by(srv2.cert, ca2.cert));
    assert_false(signed_by(srv1.cert, ca2.cert));
    strbuf_release(&p);
    tls_pem_release(&ca1);
    tls_pem_release(&srv1);
    tls_pem_release(&ca2);
    tls_pem_release(&srv2);
    remove_dir(dir);
}

static void test_bad_name(void **state)
{
    char dir[] = "/tmp/koord-pki-XXXXXX";
    const char *const bad[] = {"not a dns name!", NULL};
    struct tls_pem ca = {0}, srv = {0};

    (void)state;
    assert_non_null(mkdtemp(dir));
    assert_int_equal(apiserver_pki_serving(dir, "m", bad, &ca, &srv), -EINVAL);
    assert_null(srv.cert);
    /* The CA was made before the name was refused; nothing else was written. */
    remove_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_covered),
        cmocka_unit_test(test_regenerated_when_a_name_is_missing),
        cmocka_unit_test(test_new_ca_new_certificate),
        cmocka_unit_test(test_bad_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
