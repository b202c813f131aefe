/*
 * Tests for base/base64: RFC 4648 test vectors in the URL alphabet without padding, the bytes
 * that differ from standard base64 ('-' and '_'), round trips of every length around a group
 * boundary, and rejection of padding, foreign bytes, impossible lengths and non-canonical tails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "base/base64.h"
#include "base/strbuf.h"

static void test_vectors(void **state)
{
    static const char *const v[][2] = {
        {"", ""},           {"f", "Zg"},          {"fo", "Zm8"},          {"foo", "Zm9v"},
        {"foob", "Zm9vYg"}, {"fooba", "Zm9vYmE"}, {"foobar", "Zm9vYmFy"}, {"\xfb\xff", "-_8"},
    };
    struct strbuf sb = STRBUF_INIT;

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
        strbuf_reset(&sb);
        base64url_encode(v[i][0], strlen(v[i][0]), &sb);
        assert_string_equal(sb.buf, v[i][1]);
        strbuf_reset(&sb);
        assert_int_equal(base64url_decode(v[i][1], &sb), 0);
        assert_string_equal(sb.buf, v[i][0]);
    }
    strbuf_release(&sb);
}

static void test_round_trip(void **state)
{
    unsigned char data[9];
    struct strbuf enc = STRBUF_INIT, dec = STRBUF_INIT;

    (void)state;
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (unsigned char)(0xff - i * 29);
    for (size_t n = 0; n <= sizeof(data); n++) {
        strbuf_reset(&enc);
        strbuf_reset(&dec);
        base64url_encode(data, n, &enc);
        assert_int_equal(base64url_decode(enc.buf, &dec), 0);
        assert_int_equal(dec.len, n);
        assert_memory_equal(dec.buf, data, n);
    }
    strbuf_release(&enc);
    strbuf_release(&dec);
}

static void test_rejects(void **state)
{
    static const char *const bad[] = {"Zg==", "Zm9v+", "Zm9v/w", "Z", "Zm9vY", "Zh", "a b"};
    struct strbuf sb = STRBUF_INIT;

    (void)state;
    strbuf_addstr(&sb, "keep");
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        assert_int_equal(base64url_decode(bad[i], &sb), -EINVAL);
        assert_string_equal(sb.buf, "keep");
    }
    strbuf_release(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
