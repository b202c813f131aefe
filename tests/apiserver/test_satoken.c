/*
 * Tests for apiserver/satoken: a token issued verifies with its claims; a changed byte, another
 * key, an expired or not-yet-valid token and one for other audiences do not (-EACCES with the
 * reason); what is not a koord token at all is -EINVAL (another authenticator may know it); the
 * key file is created 0600 once and read back, and a malformed one is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "apiserver/satoken.h"
#include "base/base.h"
#include "base/base64.h"

#define NOW 1800000000

static const char key_a[] = "0123456789abcdef0123456789abcdef";
static const char key_b[] = "fedcba9876543210fedcba9876543210";

static void issue(const struct api_satokens *s, const char *const *aud, int64_t now,
                  struct strbuf *out)
{
    api_satokens_issue(s, "team-a", "robot", "uid-1", NULL, aud, now, 3600, out);
}

static void test_round_trip(void **state)
{
    static const char *const aud[] = {"api", "vault", NULL};
    static const char *const want_vault[] = {"vault", NULL};
    struct api_satokens *s = api_satokens_new(key_a, 32);
    struct api_satoken_claims c = {0};
    struct strbuf tok = STRBUF_INIT, why = STRBUF_INIT;
    (void)state;

    assert_null(api_satokens_new(key_a, 16)); /* too short a key */
    issue(s, aud, NOW, &tok);
    assert_int_equal(api_satokens_verify(s, tok.buf, want_vault, NOW + 10, &c, &why), 0);
    assert_string_equal(c.ns, "team-a");
    assert_string_equal(c.name, "robot");
    assert_string_equal(c.uid, "uid-1");
    assert_int_equal(c.exp, NOW + 3600);
    assert_string_equal(c.audiences[0], "api");
    assert_string_equal(c.audiences[1], "vault");
    assert_null(c.audiences[2]);
    assert_int_equal(strlen(c.jti), 36);
    assert_null(c.bound.pod.name);
    assert_null(c.bound.node.name);
    api_satoken_claims_release(&c);
    api_satoken_claims_release(&c); /* released twice is fine */
    strbuf_release(&tok);
    strbuf_release(&why);
    api_satokens_free(s);
}

/* The bound-object claims as kube writes them ("kubernetes.io": {..., "pod": {name, uid},
 * "node": {name, uid}}) come back from verification. */
static void test_bound_claims(void **state)
{
    static const char *const aud[] = {API_SA_ISSUER, NULL};
    char pod[] = "agent-x", pod_uid[] = "p-1", node[] = "n1", node_uid[] = "n-1";
    struct api_satoken_binding b = {.pod = {.name = pod, .uid = pod_uid},
                                    .node = {.name = node, .uid = node_uid}};
    struct api_satokens *s = api_satokens_new(key_a, 32);
    struct api_satoken_claims c = {0};
    struct strbuf tok = STRBUF_INIT, why = STRBUF_INIT, claims = STRBUF_INIT;
    const char *d1;
    (void)state;

    api_satokens_issue(s, "team-a", "robot", "uid-1", &b, aud, NOW, 3600, &tok);
    d1 = strchr(tok.buf, '.');
    assert_non_null(d1);
    {
        struct strbuf part = STRBUF_INIT;
        strbuf_add(&part, d1 + 1, (size_t)(strchr(d1 + 1, '.') - d1 - 1));
        assert_int_equal(base64url_decode(part.buf, &claims), 0);
        strbuf_release(&part);
    }
    assert_non_null(strstr(claims.buf, "\"kubernetes.io\":{\"namespace\":\"team-a\","
                                       "\"serviceaccount\":{\"name\":\"robot\",\"uid\":\"uid-1\"},"
                                       "\"pod\":{\"name\":\"agent-x\",\"uid\":\"p-1\"},"
                                       "\"node\":{\"name\":\"n1\",\"uid\":\"n-1\"}}"));
    assert_int_equal(api_satokens_verify(s, tok.buf, NULL, NOW, &c, &why), 0);
    assert_string_equal(c.bound.pod.name, "agent-x");
    assert_string_equal(c.bound.pod.uid, "p-1");
    assert_string_equal(c.bound.node.name, "n1");
    assert_string_equal(c.bound.node.uid, "n-1");
    assert_null(c.bound.secret.name);
    api_satoken_claims_release(&c);
    strbuf_release(&tok);
    strbuf_release(&why);
    strbuf_release(&claims);
    api_satokens_free(s);
}

static void test_refused(void **state)
{
    static const char *const aud[] = {"api", NULL};
    static const char *const other[] = {"vault", NULL};
    struct api_satokens *s = api_satokens_new(key_a, 32), *t = api_satokens_new(key_b, 32);
    struct api_satoken_claims c = {0};
    struct strbuf tok = STRBUF_INIT, why = STRBUF_INIT, bad = STRBUF_INIT;
    char *dot;
    (void)state;

    issue(s, aud, NOW, &tok);
    assert_int_equal(api_satokens_verify(t, tok.buf, aud, NOW, &c, &why), -EACCES);
    assert_string_equal(why.buf, "invalid signature");
    strbuf_reset(&why);
    /* one claim changed, signature kept */
    strbuf_addstr(&bad, tok.buf);
    dot = strchr(bad.buf, '.');
    dot[5] = dot[5] == 'A' ? 'B' : 'A';
    assert_int_equal(api_satokens_verify(s, bad.buf, aud, NOW, &c, &why), -EACCES);
    strbuf_reset(&why);
    assert_int_equal(api_satokens_verify(s, tok.buf, aud, NOW + 3600 + 61, &c, &why), -EACCES);
    assert_string_equal(why.buf, "service account token has expired");
    strbuf_reset(&why);
    assert_int_equal(api_satokens_verify(s, tok.buf, aud, NOW + 3600 + 59, &c, &why), 0);
    api_satoken_claims_release(&c);
    assert_int_equal(api_satokens_verify(s, tok.buf, aud, NOW - 120, &c, &why), -EACCES);
    assert_string_equal(why.buf, "service account token is not valid yet");
    strbuf_reset(&why);
    assert_int_equal(api_satokens_verify(s, tok.buf, other, NOW, &c, &why), -EACCES);
    assert_string_equal(why.buf, "token audiences is invalid for the target audiences");
    /* NULL audiences mean the API's own, which this token is not for */
    assert_int_equal(api_satokens_verify(s, tok.buf, NULL, NOW, &c, &why), -EACCES);
    /* not ours: a static token, two parts, another JOSE header */
    assert_int_equal(api_satokens_verify(s, "t0k3n", NULL, NOW, &c, &why), -EINVAL);
    assert_int_equal(api_satokens_verify(s, "a.b", NULL, NOW, &c, &why), -EINVAL);
    assert_int_equal(api_satokens_verify(s, "eyJhbGciOiJSUzI1NiJ9.e30.x", NULL, NOW, &c, &why),
                     -EINVAL);
    assert_int_equal(api_satokens_verify(NULL, tok.buf, NULL, NOW, &c, &why), -EINVAL);
    strbuf_release(&tok);
    strbuf_release(&why);
    strbuf_release(&bad);
    api_satokens_free(s);
    api_satokens_free(t);
}

static void test_default_audience(void **state)
{
    static const char *const aud[] = {API_SA_ISSUER, NULL};
    struct api_satokens *s = api_satokens_new(key_a, 32);
    struct api_satoken_claims c = {0};
    struct strbuf tok = STRBUF_INIT, why = STRBUF_INIT;
    (void)state;

    issue(s, aud, NOW, &tok);
    assert_int_equal(api_satokens_verify(s, tok.buf, NULL, NOW, &c, &why), 0);
    api_satoken_claims_release(&c);
    strbuf_release(&tok);
    strbuf_release(&why);
    api_satokens_free(s);
}

static void test_key_file(void **state)
{
    char dir[] = "/tmp/koord-satoken-XXXXXX", path[64];
    struct strbuf k1 = STRBUF_INIT, k2 = STRBUF_INIT;
    struct stat st;
    FILE *f;
    (void)state;

    assert_non_null(mkdtemp(dir));
    (void)snprintf(path, sizeof(path), "%s/sa.key", dir);
    assert_int_equal(api_satokens_load_key(path, &k1), 0);
    assert_int_equal(k1.len, 32);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(api_satokens_load_key(path, &k2), 0);
    assert_memory_equal(k1.buf, k2.buf, 32);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs("not hex\n", f) >= 0);
    assert_int_equal(fclose(f), 0);
    strbuf_reset(&k2);
    assert_int_equal(api_satokens_load_key(path, &k2), -EINVAL);
    assert_int_equal(k2.len, 0);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
    strbuf_release(&k1);
    strbuf_release(&k2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip), cmocka_unit_test(test_bound_claims),
        cmocka_unit_test(test_refused),    cmocka_unit_test(test_default_audience),
        cmocka_unit_test(test_key_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
