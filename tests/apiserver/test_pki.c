/*
 * Tests for apiserver/pki's serving certificates of other koord servers: the names a
 * certificate is made for (an aggregating API server verifies <service>.<namespace>.svc), that
 * a certificate from an older start lacking a name asked for now is made again under the same
 * CA (so an APIService's caBundle stays valid), and that a sufficient one is reused as it is.
 */
#include <setjmp.h>
#include <stdarg.h>
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
        cmocka_unit_test(test_bad_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
