/*
 * Tests for api/protobuf.c. Bodies are built here with a tiny encoder that follows the Go
 * marshaller's rules (reference protobuf.md section 3: non-pointer fields always written, empty
 * strings and zero Times included, pointers only when set, repeated scalars unpacked, map entries
 * sorted), plus the reference's hand-checked ConfigMap bytes; each is compared with the JSON
 * kubectl writes for the same object (Go's encoding/json of the struct), written out by hand.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api/protobuf.h"
#include "api/schema.h"
#include "base/base.h"
#include "testutil.h"

/* ---- the encoder ---- */

static void varint(struct strbuf *sb, uint64_t v)
{
    while (v >= 0x80) {
        strbuf_addch(sb, (char)(v | 0x80));
        v >>= 7;
    }
    strbuf_addch(sb, (char)v);
}

static void key(struct strbuf *sb, unsigned num, unsigned wire)
{
    varint(sb, (uint64_t)num << 3 | wire);
}

static void bytes(struct strbuf *sb, unsigned num, const void *p, size_t n)
{
    key(sb, num, 2);
    varint(sb, n);
    strbuf_add(sb, p, n);
}

static void str(struct strbuf *sb, unsigned num, const char *s)
{
    bytes(sb, num, s, strlen(s));
}

/* A varint field; negative int32/int64 are sign-extended to 64 bits as Go writes them. */
static void num(struct strbuf *sb, unsigned n, int64_t v)
{
    key(sb, n, 0);
    varint(sb, (uint64_t)v);
}

/* Appends the message inner (consumed) as field n. */
static void msg(struct strbuf *sb, unsigned n, struct strbuf *inner)
{
    bytes(sb, n, inner->buf, inner->len);
    strbuf_release(inner);
}

static void map_entry(struct strbuf *sb, unsigned n, const char *k, const char *v)
{
    struct strbuf e = STRBUF_INIT;
    str(&e, 1, k);
    str(&e, 2, v);
    msg(sb, n, &e);
}

/* ObjectMeta as Go writes it: fields 1..8 always (creationTimestamp an empty Time). */
static void meta(struct strbuf *sb, const char *name, const char *ns, const char *labels_kv)
{
    struct strbuf m = STRBUF_INIT, t = STRBUF_INIT;

    str(&m, 1, name);
    str(&m, 2, "");
    str(&m, 3, ns);
    str(&m, 4, "");
    str(&m, 5, "");
    str(&m, 6, "");
    num(&m, 7, 0);
    msg(&m, 8, &t);
    if (labels_kv)
        map_entry(&m, 11, labels_kv, labels_kv + strlen(labels_kv) + 1);
    msg(sb, 1, &m);
}

/* The whole body: magic, Unknown{typeMeta, raw, "", ""}. raw is consumed. */
static void envelope(struct strbuf *out, const char *av, const char *kind, struct strbuf *raw)
{
    struct strbuf tm = STRBUF_INIT;

    strbuf_add(out, "k8s\0", 4);
    str(&tm, 1, av);
    str(&tm, 2, kind);
    msg(out, 1, &tm);
    msg(out, 2, raw);
    str(out, 3, "");
    str(out, 4, "");
}

static cJSON *decode_ok(const struct strbuf *body)
{
    struct protobuf_error err;
    cJSON *o = NULL;
    int r = protobuf_decode(body->buf, body->len, NULL, &o, &err);

    if (r != 0)
        fail_msg("decode: %d (%d) %s", r, err.status, err.msg);
    return o;
}

static void expect_decode(struct strbuf *body, const char *want)
{
    cJSON *o = decode_ok(body);

    assert_json_eq(o, want);
    cJSON_Delete(o);
    strbuf_release(body);
}

static void expect_error(struct strbuf *body, int want_r, int want_status, const char *want_msg)
{
    struct protobuf_error err;
    cJSON *o = NULL;
    int r = protobuf_decode(body->buf, body->len, NULL, &o, &err);

    if (r != want_r || err.status != want_status || !strstr(err.msg, want_msg))
        fail_msg("got %d (%d) \"%s\", want %d (%d) containing \"%s\"", r, err.status, err.msg,
                 want_r, want_status, want_msg);
    assert_null(o);
    strbuf_release(body);
}

/* ---- kinds ---- */

/* protobuf.md section 2, byte for byte. */
static void test_reference_configmap(void **state)
{
    static const unsigned char body[] = {
        0x6b, 0x38, 0x73, 0x00, 0x0a, 0x0f, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x09, 0x43, 0x6f,
        0x6e, 0x66, 0x69, 0x67, 0x4d, 0x61, 0x70, 0x12, 0x37, 0x0a, 0x25, 0x0a, 0x04, 0x64,
        0x65, 0x6d, 0x6f, 0x12, 0x00, 0x1a, 0x07, 0x64, 0x65, 0x66, 0x61, 0x75, 0x6c, 0x74,
        0x22, 0x00, 0x2a, 0x00, 0x32, 0x00, 0x38, 0x00, 0x42, 0x00, 0x5a, 0x08, 0x0a, 0x03,
        0x61, 0x70, 0x70, 0x12, 0x01, 0x78, 0x12, 0x06, 0x0a, 0x01, 0x61, 0x12, 0x01, 0x31,
        0x12, 0x06, 0x0a, 0x01, 0x62, 0x12, 0x01, 0x32, 0x1a, 0x00, 0x22, 0x00};
    struct protobuf_error err;
    cJSON *o = NULL;
    (void)state;

    assert_int_equal(protobuf_decode(body, sizeof(body), NULL, &o, &err), 0);
    assert_json_eq(o, "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
                      "\"demo\",\"namespace\":\"default\",\"creationTimestamp\":null,\"labels\":"
                      "{\"app\":\"x\"}},\"data\":{\"a\":\"1\",\"b\":\"2\"}}");
    cJSON_Delete(o);
}

/* kubectl create namespace team-a */
static void test_namespace(void **state)
{
    struct strbuf b = STRBUF_INIT, raw = STRBUF_INIT, spec = STRBUF_INIT, st = STRBUF_INIT;
    (void)state;

    meta(&raw, "team-a", "", NULL);
    msg(&raw, 2, &spec);
    str(&st, 1, "");
    msg(&raw, 3, &st);
    envelope(&b, "v1", "Namespace", &raw);
    expect_decode(&b, "{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
                      "\"team-a\",\"creationTimestamp\":null},\"spec\":{},\"status\":{}}");
}

/* kubectl create secret generic s --from-literal=k=<bytes with a NUL and 0xff> --type=Opaque */
static void test_secret_bytes(void **state)
{
    struct strbuf b = STRBUF_INIT, raw = STRBUF_INIT, e = STRBUF_INIT;
    (void)state;

    meta(&raw, "s", "default", NULL);
    str(&e, 1, "k");
    bytes(&e, 2, "a\0\xff", 3);
    msg(&raw, 2, &e);
    str(&raw, 3, "Opaque");
    envelope(&b, "v1", "Secret", &raw);
    expect_decode(&b, "{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"s\","
                      "\"namespace\":\"default\",\"creationTimestamp\":null},"
                      "\"data\":{\"k\":\"YQD/\"},\"type\":\"Opaque\"}");
}

/* kubectl create service nodeport web --tcp=80:8080: targetPort an int, one named string */
static void test_service(void **state)
{
    struct strbuf b = STRBUF_INIT, raw = STRBUF_INIT, spec = STRBUF_INIT, port = STRBUF_INIT,
                  tp = STRBUF_INIT, st = STRBUF_INIT, lb = STRBUF_INIT, port2 = STRBUF_INIT,
                  tp2 = STRBUF_INIT;
    (void)state;

    meta(&raw, "web", "default", "app\0web");
    str(&port, 1, "80-8080");
    str(&port, 2, "TCP");
    num(&port, 3, 80);
    num(&tp, 1, 0);
    num(&tp, 2, 8080);
    str(&tp, 3, "");
    msg(&port, 4, &tp);
    num(&port, 5, 0);
    msg(&spec, 1, &port);
    str(&port2, 1, "");
    str(&port2, 2, "UDP");
    num(&port2, 3, 53);
    num(&tp2, 1, 1);
    num(&tp2, 2, 0);
    str(&tp2, 3, "dns");
    msg(&port2, 4, &tp2);
    num(&port2, 5, 30053);
    msg(&spec, 1, &port2);
    map_entry(&spec, 2, "app", "web");
    str(&spec, 3, "");
    str(&spec, 4, "NodePort");
    str(&spec, 7, "");
    str(&spec, 8, "");
    str(&spec, 10, "");
    str(&spec, 11, "");
    num(&spec, 12, 0);
    num(&spec, 13, 0);
    msg(&raw, 2, &spec);
    msg(&st, 1, &lb);
    msg(&raw, 3, &st);
    envelope(&b, "v1", "Service", &raw);
    expect_decode(
        &b, "{\"kind\":\"Service\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web\","
            "\"namespace\":\"default\",\"creationTimestamp\":null,\"labels\":{\"app\":\"web\"}},"
            "\"spec\":{\"ports\":[{\"name\":\"80-8080\",\"protocol\":\"TCP\",\"port\":80,"
            "\"targetPort\":8080},{\"protocol\":\"UDP\",\"port\":53,\"targetPort\":\"dns\","
            "\"nodePort\":30053}],\"selector\":{\"app\":\"web\"},\"type\":\"NodePort\"},"
            "\"status\":{\"loadBalancer\":{}}}");
}

/* kubectl create priorityclass low --value=-5 --preemption-policy=Never: a negative int32 is a
 * 10-byte varint; value is written at 0 too, globalDefault only when true */
static void test_priority_class(void **state)
{
    struct strbuf b = STRBUF_INIT, raw = STRBUF_INIT;
    (void)state;

    meta(&raw, "low", "", NULL);
    num(&raw, 2, -5);
    num(&raw, 3, 0);
    str(&raw, 4, "");
    str(&raw, 5, "Never");
    envelope(&b, "scheduling.k8s.io/v1", "PriorityClass", &raw);
    expect_decode(&b, "{\"kind\":\"PriorityClass\",\"apiVersion\":\"scheduling.k8s.io/v1\","
                      "\"metadata\":{\"name\":\"low\",\"creationTimestamp\":null},\"value\":-5,"
                      "\"preemptionPolicy\":\"Never\"}");

    meta(&raw, "zero", "", NULL);
    num(&raw, 2, 0);
    num(&raw, 3, 1);
    str(&raw, 4, "d");
    envelope(&b, "scheduling.k8s.io/v1", "PriorityClass", &raw);
    expect_decode(&b, "{\"kind\":\"PriorityClass\",\"apiVersion\":\"scheduling.k8s.io/v1\","
                      "\"metadata\":{\"name\":\"zero\",\"creationTimestamp\":null},\"value\":0,"
                      "\"globalDefault\":true,\"description\":\"d\"}");
}

/* kubectl create quota q --hard=cpu=1000m,pods=10: quantities in their canonical form */
static void test_resource_quota(void **state)
{
    struct strbuf b = STRBUF_INIT, raw = STRBUF_INIT, spec = STRBUF_INIT, st = STRBUF_INIT,
                  e = STRBUF_INIT, q = STRBUF_INIT, e2 = STRBUF_INIT, q2 = STRBUF_INIT;
    (void)state;

    meta(&raw, "q", "default", NULL);
    str(&e, 1, "cpu");
    str(&q, 1, "1000m");
    msg(&e, 2, &q);
    msg(&spec, 1, &e);
    str(&e2, 1, "pods");
    str(&q2, 1, "10");
    msg(&e2, 2, &q2);
    msg(&spec, 1, &e2);
    msg(&raw, 2, &spec);
    msg(&raw, 3, &st);
    envelope(&b, "v1", "ResourceQuota", &raw);
    expect_decode(&b, "{\"kind\":\"ResourceQuota\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
                      "\"q\",\"namespace\":\"default\",\"creationTimestamp\":null},"
                      "\"spec\":{\"hard\":{\"cpu\":\"1\",\"pods\":\"10\"}},\"status\":{}}");
}

/* kubectl create serviceaccount sa; automount set explicitly to false is kept */
static void test_service_account(void **state)
{
    struct strbuf b = STRBUF_INIT, raw = STRBUF_INIT, ref = STRBUF_INIT;
    (void)state;

    meta(&raw, "sa", "default", NULL);
    str(&ref, 1, "pull");
    msg(&raw, 3, &ref);
    num(&raw, 4, 0);
    envelope(&b, "v1", "ServiceAccount", &raw);
    expect_decode(&b, "{\"kind\":\"ServiceAccount\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
                      "\"sa\",\"namespace\":\"default\",\"creationTimestamp\":null},"
                      "\"imagePullSecrets\":[{\"name\":\"pull\"}],"
                      "\"automountServiceAccountToken\":false}");
}

/* Pods().Delete(ctx, name, {GracePeriodSeconds: &0, Preconditions: {UID: &u},
 * PropagationPolicy: &Background, DryRun: [All]}), under any group version */
static void test_delete_options(void **state)
{
    struct strbuf b = STRBUF_INIT, raw = STRBUF_INIT, pre = STRBUF_INIT;
    (void)state;

    num(&raw, 1, 0);
    str(&pre, 1, "u-1");
    msg(&raw, 2, &pre);
    str(&raw, 4, "Background");
    str(&raw, 5, "All");
    envelope(&b, "v1", "DeleteOptions", &raw);
    expect_decode(&b, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"gracePeriodSeconds\":0,"
                      "\"preconditions\":{\"uid\":\"u-1\"},\"propagationPolicy\":\"Background\","
                      "\"dryRun\":[\"All\"]}");
    envelope(&b, "scheduling.k8s.io/v1", "DeleteOptions", &raw);
    expect_decode(&b, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"scheduling.k8s.io/v1\"}");
}

/* Times: seconds only (nanos ignored), a zero Time null, MicroTime to the microsecond */
static void test_times(void **state)
{
    struct strbuf b = STRBUF_INIT, raw = STRBUF_INIT, m = STRBUF_INIT, t = STRBUF_INIT,
                  spec = STRBUF_INIT, rt = STRBUF_INIT, dt = STRBUF_INIT;
    (void)state;

    str(&m, 1, "l");
    num(&t, 1, 1709625600);
    num(&t, 2, 999);
    msg(&m, 8, &t);
    msg(&m, 9, &dt); /* deletionTimestamp present but zero: null */
    msg(&raw, 1, &m);
    num(&rt, 1, 1709625600);
    num(&rt, 2, 123456789);
    msg(&spec, 4, &rt);
    str(&spec, 1, "");
    num(&spec, 2, 15);
    msg(&raw, 2, &spec);
    envelope(&b, "coordination.k8s.io/v1", "Lease", &raw);
    expect_decode(&b, "{\"kind\":\"Lease\",\"apiVersion\":\"coordination.k8s.io/v1\","
                      "\"metadata\":{\"name\":\"l\",\"creationTimestamp\":"
                      "\"2024-03-05T08:00:00Z\",\"deletionTimestamp\":null},"
                      "\"spec\":{\"holderIdentity\":\"\",\"leaseDurationSeconds\":15,"
                      "\"renewTime\":\"2024-03-05T08:00:00.123456Z\"}}");
}

/* A Pod through the nested tables: inline volume sources and env selectors, probes, packed and
 * unpacked repeated scalars, a Quantity absent from a non-pointer field */
static void test_pod(void **state)
{
    struct strbuf b = STRBUF_INIT, raw = STRBUF_INIT, spec = STRBUF_INIT, c = STRBUF_INIT,
                  env = STRBUF_INIT, from = STRBUF_INIT, sel = STRBUF_INIT, lor = STRBUF_INIT,
                  vol = STRBUF_INIT, cmv = STRBUF_INIT, lor2 = STRBUF_INIT, res = STRBUF_INIT,
                  probe = STRBUF_INIT, h = STRBUF_INIT, tcp = STRBUF_INIT, port = STRBUF_INIT,
                  psc = STRBUF_INIT, packed = STRBUF_INIT, env2 = STRBUF_INIT, from2 = STRBUF_INIT,
                  rfs = STRBUF_INIT, status = STRBUF_INIT;
    (void)state;

    meta(&raw, "p", "default", NULL);
    str(&vol, 1, "cfg");
    str(&lor2, 1, "cm");
    msg(&cmv, 1, &lor2);
    num(&cmv, 3, 420);
    msg(&h, 19, &cmv);
    msg(&vol, 2, &h);
    msg(&spec, 1, &vol);
    str(&c, 1, "app");
    str(&c, 2, "nginx");
    str(&env, 1, "K");
    str(&env, 2, "");
    str(&lor, 1, "cm");
    msg(&sel, 1, &lor);
    str(&sel, 2, "key");
    msg(&from, 3, &sel);
    msg(&env, 3, &from);
    msg(&c, 7, &env);
    str(&env2, 1, "CPU");
    str(&env2, 2, "");
    str(&rfs, 1, "");
    str(&rfs, 2, "limits.cpu");
    msg(&from2, 2, &rfs);
    msg(&env2, 3, &from2);
    msg(&c, 7, &env2);
    msg(&c, 8, &res);
    num(&port, 1, 0);
    num(&port, 2, 80);
    str(&port, 3, "");
    msg(&tcp, 1, &port);
    str(&tcp, 2, "");
    {
        struct strbuf handler = STRBUF_INIT;
        msg(&handler, 3, &tcp);
        msg(&probe, 1, &handler);
    }
    num(&probe, 2, 0);
    num(&probe, 3, 1);
    msg(&c, 10, &probe);
    str(&c, 13, "/dev/termination-log");
    num(&c, 16, 0);
    msg(&spec, 2, &c);
    str(&spec, 3, "Always");
    num(&psc, 4, 1);
    varint(&packed, 2);
    varint(&packed, 3);
    bytes(&psc, 4, packed.buf, packed.len);
    strbuf_release(&packed);
    msg(&spec, 14, &psc);
    msg(&raw, 2, &spec);
    str(&status, 1, "");
    msg(&raw, 3, &status);
    envelope(&b, "v1", "Pod", &raw);
    expect_decode(
        &b, "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p\",\"namespace\":"
            "\"default\",\"creationTimestamp\":null},\"spec\":{\"volumes\":[{\"name\":\"cfg\","
            "\"configMap\":{\"name\":\"cm\",\"defaultMode\":420}}],\"containers\":[{\"name\":"
            "\"app\",\"image\":\"nginx\",\"env\":[{\"name\":\"K\",\"valueFrom\":{"
            "\"configMapKeyRef\":{\"name\":\"cm\",\"key\":\"key\"}}},{\"name\":\"CPU\","
            "\"valueFrom\":{\"resourceFieldRef\":{\"resource\":\"limits.cpu\",\"divisor\":"
            "\"0\"}}}],\"resources\":{},\"livenessProbe\":{\"tcpSocket\":{\"port\":80},"
            "\"timeoutSeconds\":1},\"terminationMessagePath\":\"/dev/termination-log\"}],"
            "\"restartPolicy\":\"Always\",\"securityContext\":{\"supplementalGroups\":[1,2,3]}},"
            "\"status\":{}}");
}

/* Wire details Go's decoder accepts: unknown fields of every wire type skipped, a singular
 * message written twice merged, duplicate map keys (last wins), entries without key or value,
 * fields in any order */
static void test_wire_tolerance(void **state)
{
    struct strbuf b = STRBUF_INIT, raw = STRBUF_INIT, m1 = STRBUF_INIT, m2 = STRBUF_INIT,
                  e = STRBUF_INIT, e2 = STRBUF_INIT, e3 = STRBUF_INIT;
    (void)state;

    map_entry(&raw, 2, "b", "old");
    str(&m1, 1, "cm");
    key(&m1, 99, 1);
    strbuf_add(&m1, "12345678", 8);
    key(&m1, 98, 5);
    strbuf_add(&m1, "1234", 4);
    num(&m1, 97, 7);
    msg(&raw, 1, &m1);
    str(&m2, 3, "ns");
    msg(&raw, 1, &m2);
    map_entry(&raw, 2, "b", "new");
    str(&e, 2, "no-key");
    msg(&raw, 2, &e);
    str(&e2, 1, "no-value");
    msg(&raw, 2, &e2);
    str(&e3, 1, "empty-bytes");
    msg(&raw, 3, &e3);
    envelope(&b, "v1", "ConfigMap", &raw);
    expect_decode(&b, "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
                      "\"cm\",\"namespace\":\"ns\",\"creationTimestamp\":null},\"data\":{"
                      "\"b\":\"new\",\"\":\"no-key\",\"no-value\":\"\"},\"binaryData\":{"
                      "\"empty-bytes\":\"\"}}");
}

/* ---- errors ---- */

static void test_errors(void **state)
{
    struct strbuf b = STRBUF_INIT, raw = STRBUF_INIT, tp = STRBUF_INIT, port = STRBUF_INIT,
                  spec = STRBUF_INIT, vol = STRBUF_INIT, src = STRBUF_INIT, nfs = STRBUF_INIT;
    (void)state;

    strbuf_addstr(&b, "{\"kind\":\"Namespace\"}");
    expect_error(&b, -EINVAL, 400, "expected prefix [107 56 115 0]");
    strbuf_add(&b, "k8s", 3);
    expect_error(&b, -EINVAL, 400, "expected prefix");

    /* no kind in the envelope */
    meta(&raw, "x", "", NULL);
    envelope(&b, "v1", "", &raw);
    expect_error(&b, -EINVAL, 400, "typeMeta has no kind");

    /* a kind without a table */
    meta(&raw, "d", "default", NULL);
    envelope(&b, "apps/v1", "StatefulSet", &raw);
    expect_error(&b, -ENOTSUP, 415, "kind StatefulSet in version apps/v1 cannot be decoded");
    meta(&raw, "x", "", NULL);
    envelope(&b, "v2", "Namespace", &raw);
    expect_error(&b, -ENOTSUP, 415, "kind Namespace in version v2");

    /* a length past the end */
    strbuf_add(&b, "k8s\0", 4);
    key(&b, 2, 2);
    varint(&b, 100);
    strbuf_addstr(&b, "short");
    expect_error(&b, -EINVAL, 400, "field 2 is 100 bytes long but only 5 remain");

    /* a truncated varint inside the object, reported at its path */
    key(&raw, 1, 2);
    varint(&raw, 2);
    key(&raw, 7, 0);
    strbuf_addch(&raw, (char)0x80);
    envelope(&b, "v1", "Namespace", &raw);
    expect_error(&b, -EINVAL, 400, "metadata: truncated varint");

    /* a wire type the field cannot have */
    num(&raw, 2, 5);
    envelope(&b, "v1", "ConfigMap", &raw);
    expect_error(&b, -EINVAL, 400, "data: wire type 0, want 2");

    /* groups are not used by Kubernetes */
    key(&raw, 9, 3);
    envelope(&b, "v1", "ConfigMap", &raw);
    expect_error(&b, -EINVAL, 400, "field 9 has unsupported wire type 3");

    /* field number 0 */
    strbuf_addch(&raw, 0);
    strbuf_addch(&raw, 0);
    envelope(&b, "v1", "ConfigMap", &raw);
    expect_error(&b, -EINVAL, 400, "illegal field number 0");

    /* an IntOrString of a third type */
    num(&tp, 1, 2);
    num(&port, 3, 80);
    msg(&port, 4, &tp);
    msg(&spec, 1, &port);
    msg(&raw, 2, &spec);
    envelope(&b, "v1", "Service", &raw);
    expect_error(&b, -EINVAL, 400, "spec.ports[0].targetPort: IntOrString has type 2");

    /* strings must be text */
    meta(&raw, "a\xff", "", NULL);
    envelope(&b, "v1", "Namespace", &raw);
    expect_error(&b, -EINVAL, 400, "metadata.name: string is not valid UTF-8");
    {
        struct strbuf e = STRBUF_INIT;
        str(&e, 1, "k");
        bytes(&e, 2, "a\0b", 3);
        msg(&raw, 2, &e);
    }
    envelope(&b, "v1", "ConfigMap", &raw);
    expect_error(&b, -EINVAL, 400, "data[k]: string holds a NUL byte");

    /* a bad quantity */
    {
        struct strbuf e = STRBUF_INIT, q = STRBUF_INIT, sp = STRBUF_INIT;
        str(&e, 1, "cpu");
        str(&q, 1, "1..5");
        msg(&e, 2, &q);
        msg(&sp, 1, &e);
        msg(&raw, 2, &sp);
    }
    envelope(&b, "v1", "ResourceQuota", &raw);
    expect_error(&b, -EINVAL, 400, "spec.hard[cpu]: quantity \"1..5\"");

    /* a known field whose message has no table is refused by name, not dropped */
    str(&vol, 1, "data");
    str(&nfs, 1, "server");
    msg(&src, 7, &nfs);
    msg(&vol, 2, &src);
    msg(&spec, 1, &vol);
    msg(&raw, 2, &spec);
    envelope(&b, "v1", "Pod", &raw);
    expect_error(&b, -ENOTSUP, 415,
                 "spec.volumes[0].volumeSource.nfs: NFSVolumeSource is not supported");

    /* an encoded raw object */
    strbuf_add(&b, "k8s\0", 4);
    {
        struct strbuf tm = STRBUF_INIT;
        str(&tm, 1, "v1");
        str(&tm, 2, "ConfigMap");
        msg(&b, 1, &tm);
        str(&b, 3, "gzip");
    }
    expect_error(&b, -ENOTSUP, 415, "content encoding \"gzip\"");

    /* a time outside what JSON can write */
    {
        struct strbuf m = STRBUF_INIT, t = STRBUF_INIT;
        num(&t, 1, INT64_MAX);
        msg(&m, 8, &t);
        msg(&raw, 1, &m);
    }
    envelope(&b, "v1", "ConfigMap", &raw);
    expect_error(&b, -EINVAL, 400, "metadata.creationTimestamp: time");
}

static void test_limits(void **state)
{
    struct codec_limits lim = codec_default_limits;
    struct strbuf b = STRBUF_INIT, raw = STRBUF_INIT;
    struct protobuf_error err;
    cJSON *o = NULL;
    (void)state;

    meta(&raw, "cm", "default", NULL);
    for (int i = 0; i < 50; i++) {
        char k[8];
        (void)snprintf(k, sizeof(k), "k%d", i);
        map_entry(&raw, 2, k, "v");
    }
    envelope(&b, "v1", "ConfigMap", &raw);
    lim.max_nodes = 40;
    assert_int_equal(protobuf_decode(b.buf, b.len, &lim, &o, &err), -E2BIG);
    assert_non_null(strstr(err.msg, "more than 40 values"));
    lim = codec_default_limits;
    lim.max_depth = 1; /* the object, then metadata */
    assert_int_equal(protobuf_decode(b.buf, b.len, &lim, &o, &err), -E2BIG);
    assert_non_null(strstr(err.msg, "metadata: the object nests deeper than 1 levels"));
    lim = codec_default_limits;
    lim.max_bytes = 10;
    assert_int_equal(protobuf_decode(b.buf, b.len, &lim, &o, &err), -E2BIG);
    assert_null(o);
    strbuf_release(&b);
}

/* Every truncation of a valid body fails cleanly or decodes (no reads past the end: valgrind
 * and ASan watch this one). */
static void test_truncations(void **state)
{
    struct strbuf b = STRBUF_INIT, raw = STRBUF_INIT;
    (void)state;

    meta(&raw, "cm", "default", "app\0x");
    map_entry(&raw, 2, "a", "1");
    envelope(&b, "v1", "ConfigMap", &raw);
    for (size_t n = 0; n < b.len; n++) {
        struct protobuf_error err;
        cJSON *o = NULL;
        int r = protobuf_decode(b.buf, n, NULL, &o, &err);
        if (r == 0)
            cJSON_Delete(o);
        else
            assert_true(r == -EINVAL && err.status == 400 && err.msg[0]);
    }
    strbuf_release(&b);
}

/* ---- the tables against the type descriptions ---- */

static void check_names(const struct protobuf_msg *m, const struct api_schema *s,
                        struct strbuf *path)
{
    for (const struct protobuf_field *f = m->fields; f && f->num; f++) {
        const struct api_prop *p;
        const struct api_schema *sub;
        size_t len = path->len;

        if (f->type == PROTOBUF_INLINE) {
            check_names(f->msg, s, path);
            continue;
        }
        if (!s || s->type != API_OBJECT || !s->props)
            return; /* schemaless below here: nothing to compare */
        strbuf_addf(path, ".%s", f->json);
        p = api_schema_prop(s, f->json);
        if (!p)
            fail_msg("%s (message %s) is not a property of the type description", path->buf,
                     m->name);
        sub = p->schema;
        if (sub && (sub->type == API_ARRAY || sub->type == API_MAP))
            sub = sub->items;
        if (f->type == PROTOBUF_MESSAGE)
            check_names(f->msg, sub, path);
        strbuf_setlen(path, len);
    }
}

static void test_tables_match_schemas(void **state)
{
    int checked = 0;
    (void)state;

    for (const struct protobuf_kind *k = protobuf_kinds; k->kind; k++) {
        char av[64];
        const struct api_kind *ak;
        struct strbuf path = STRBUF_INIT;

        (void)snprintf(av, sizeof(av), "%s%sv1", k->group, *k->group ? "/" : "");
        if (!(ak = api_kind_find(av, k->kind)))
            continue;
        strbuf_addstr(&path, k->kind);
        check_names(k->msg, api_kind_schema(ak), &path);
        strbuf_release(&path);
        checked++;
    }
    /* Node, Pod, ConfigMap, Event, Namespace, Lease, Secret, Service, Endpoints, PriorityClass,
     * PodDisruptionBudget, Deployment, Job, CronJob, ServiceAccount, Role, ClusterRole,
     * RoleBinding, ClusterRoleBinding */
    assert_int_equal(checked, 19);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_configmap),
        cmocka_unit_test(test_namespace),
        cmocka_unit_test(test_secret_bytes),
        cmocka_unit_test(test_service),
        cmocka_unit_test(test_priority_class),
        cmocka_unit_test(test_resource_quota),
        cmocka_unit_test(test_service_account),
        cmocka_unit_test(test_delete_options),
        cmocka_unit_test(test_times),
        cmocka_unit_test(test_pod),
        cmocka_unit_test(test_wire_tolerance),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_truncations),
        cmocka_unit_test(test_tables_match_schemas),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
