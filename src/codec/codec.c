/*
 * codec plumbing shared by the JSON and YAML halves: the cJSON allocation hook that routes cJSON
 * through the checked allocator, default limits, error positions, UTF-8 validation, number
 * formatting that reads back exactly, the duplicate-key set, and file reading with a bound.
 */
#include "codec/codec.h"

#include <fcntl.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec-int.h"

const struct codec_limits codec_default_limits = {
    .max_bytes = 32u << 20,
    .max_depth = 100,
    .max_nodes = 4u << 20,
    .max_docs = 10000,
};

_Thread_local bool codec__oom;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static uint64_t hash_key[2];

/*
 * The small-block cache (codec_alloc_cache()). Classes are glibc's usable sizes of small chunks,
 * 24, 40, 56, ... (chunks of 16-byte multiples minus the 8-byte header): a freed block goes to
 * the class of malloc_usable_size(), so any block of a class can serve any request up to its
 * size. Under ASan and valgrind the usable size is the requested one, and only requests of
 * exactly a class size are cached.
 */
#define CACHE_CLASSES 16 /* 24 .. 264 bytes */
#define CACHE_MIN     24
#define CACHE_STEP    16

/* A stack of pointers per class rather than a list linked through the blocks: popping a list
 * head loads the block's first word, a cache miss that was most of the allocation's cost. */
struct alloc_cache {
    struct {
        void **v;
        size_t n, alloc;
    } cls[CACHE_CLASSES];
    size_t bytes;
};

/* A server may run a thread per connection: at most CACHE_THREADS of them hold a cache at a
 * time (a slot is taken when a thread first frees, given back when it exits), so the total is
 * bounded by CACHE_THREADS x cache_cap whatever the number of connections. */
#define CACHE_THREADS 16

static size_t cache_cap; /* bytes per thread; 0: off */
static atomic_int cache_slots = CACHE_THREADS;
static pthread_key_t cache_key;
static _Thread_local struct alloc_cache *cache;
static _Thread_local bool cache_denied; /* no slot was free when this thread asked */

static void cache_free(void *arg)
{
    struct alloc_cache *c = arg;

    if (c == cache) /* a thread-exit destructor: frees after it start a new cache */
        cache = NULL;

    for (size_t k = 0; k < CACHE_CLASSES; k++) {
        for (size_t i = 0; i < c->cls[k].n; i++)
            free(c->cls[k].v[i]);
        free(c->cls[k].v);
    }
    free(c);
    (void)atomic_fetch_add(&cache_slots, 1);
}

void *codec__malloc(size_t n)
{
    struct alloc_cache *c = cache;
    void *p;

    if (c && n <= CACHE_MIN + (CACHE_CLASSES - 1) * CACHE_STEP) {
        size_t k = n <= CACHE_MIN ? 0 : (n - CACHE_MIN + CACHE_STEP - 1) / CACHE_STEP;

        if (c->cls[k].n) {
            c->bytes -= CACHE_MIN + k * CACHE_STEP;
            return c->cls[k].v[--c->cls[k].n];
        }
    }
    p = cmalloc(n);
    if (!p)
        codec__oom = true;
    return p;
}

static void codec_free(void *p)
{
    struct alloc_cache *c = cache;
    size_t u;

    if (!p)
        return;
    if (!c && cache_cap && !cache_denied) {
        if (atomic_fetch_sub(&cache_slots, 1) > 0) {
            c = cache = xcalloc(1, sizeof(*c));
            CHECK(pthread_setspecific(cache_key, c) == 0);
        } else {
            (void)atomic_fetch_add(&cache_slots, 1);
            cache_denied = true;
        }
    }
    if (c) {
        u = malloc_usable_size(p);
        if (u >= CACHE_MIN && (u - CACHE_MIN) % CACHE_STEP == 0 &&
            (u - CACHE_MIN) / CACHE_STEP < CACHE_CLASSES && c->bytes + u <= cache_cap) {
            size_t k = (u - CACHE_MIN) / CACHE_STEP;

            if (c->cls[k].n == c->cls[k].alloc) {
                size_t alloc = c->cls[k].alloc ? 2 * c->cls[k].alloc : 256;
                void **v = realloc(c->cls[k].v, alloc * sizeof(*v));

                if (!v) {
                    free(p);
                    return;
                }
                c->cls[k].v = v;
                c->cls[k].alloc = alloc;
            }
            c->cls[k].v[c->cls[k].n++] = p;
            c->bytes += u;
            return;
        }
    }
    free(p);
}

void codec_alloc_cache(size_t bytes_per_thread)
{
    codec_init();
    cache_cap = bytes_per_thread;
}

void codec_alloc_cache_release(void)
{
    if (cache) {
        CHECK(pthread_setspecific(cache_key, NULL) == 0);
        cache_free(cache);
    }
}

static void init_once_fn(void)
{
    cJSON_Hooks hooks = {.malloc_fn = codec__malloc, .free_fn = codec_free};

    CHECK(pthread_key_create(&cache_key, cache_free) == 0);
    cJSON_InitHooks(&hooks);
    /* The key only has to be unpredictable to whoever sends the input; fall back to weaker
     * entropy rather than fail if getrandom() is unavailable. */
    if (getrandom(hash_key, sizeof(hash_key), GRND_NONBLOCK) != (ssize_t)sizeof(hash_key)) {
        struct timespec ts;

        (void)clock_gettime(CLOCK_REALTIME, &ts);
        hash_key[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15u ^ (uint64_t)ts.tv_sec;
        hash_key[1] = (uint64_t)(uintptr_t)&ts ^ ((uint64_t)getpid() << 32);
    }
}

void codec_init(void)
{
    CHECK(pthread_once(&init_once, init_once_fn) == 0);
}

const struct codec_limits *codec__limits(const struct codec_limits *lim)
{
    return lim ? lim : &codec_default_limits;
}

void codec__set_error(struct codec_error *err, int line, int column, const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return;
    err->line = line;
    err->column = column;
    va_start(ap, fmt);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start initialised ap */
    (void)vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
}

void codec__position(const char *buf, size_t len, size_t off, int *ret_line, int *ret_column)
{
    int line = 1, column = 1;
    size_t i;

    if (off >= len) {
        off = len;
        if (len && buf[len - 1] == '\n')
            off = len - 1;
    }
    for (i = 0; i < off; i++) {
        unsigned char c = (unsigned char)buf[i];

        if (c == '\n') {
            line++;
            column = 1;
        } else if ((c & 0xc0) != 0x80 && line < INT32_MAX && column < INT32_MAX) {
            column++;
        }
    }
    *ret_line = line;
    *ret_column = column;
}

void codec__preview(char *dst, size_t size, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    struct strbuf sb = STRBUF_INIT;
    size_t i, shown = 0;

    strbuf_addch(&sb, '"');
    for (i = 0; i < len && shown < 60; shown++) {
        unsigned char c = (unsigned char)s[i];
        uint32_t cp;
        size_t n;

        if (c == '"' || c == '\\') {
            strbuf_addch(&sb, '\\');
            strbuf_addch(&sb, (char)c);
            i++;
        } else if (c >= 0x20 && c < 0x7f) {
            strbuf_addch(&sb, (char)c);
            i++;
        } else if (c >= 0x80 &&
                   (n = codec__utf8_decode((const unsigned char *)s + i, len - i, &cp)) > 0 &&
                   cp >= 0xa0) {
            strbuf_add(&sb, s + i, n);
            i += n;
        } else {
            strbuf_addstr(&sb, "\\x");
            strbuf_addch(&sb, hex[c >> 4]);
            strbuf_addch(&sb, hex[c & 15]);
            i++;
        }
    }
    strbuf_addch(&sb, '"');
    if (i < len)
        strbuf_addstr(&sb, "...");
    (void)snprintf(dst, size, "%s", sb.buf);
    strbuf_release(&sb);
}

size_t codec__utf8_decode(const unsigned char *s, size_t len, uint32_t *ret_cp)
{
    uint32_t cp;
    size_t n, i;

    if (!len)
        return 0;
    if (s[0] < 0x80) {
        *ret_cp = s[0];
        return 1;
    }
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        n = 2;
        cp = s[0] & 0x1f;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        n = 3;
        cp = s[0] & 0x0f;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        n = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (len < n)
        return 0;
    for (i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    /* Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8. */
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    *ret_cp = cp;
    return n;
}

size_t codec__utf8_check(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;

    while (i < len) {
        uint32_t cp;
        size_t n;

        if (p[i] < 0x80) {
            i++;
            continue;
        }
        n = codec__utf8_decode(p + i, len - i, &cp);
        if (!n)
            return i;
        i += n;
    }
    return len;
}

size_t codec__format_number(double d, char buf[CODEC_NUMBER_MAX])
{
    int prec, n = 0;

    if (!isfinite(d)) {
        memcpy(buf, "null", 5);
        return 4;
    }
    /* Integral values up to 2^53 are exact in a double: print them as integers, never with an
     * exponent, so counters and sizes look the way Kubernetes clients expect. */
    if (fabs(d) <= 9007199254740992.0 && d == trunc(d)) {
        char tmp[24];
        int64_t v = (int64_t)d;
        uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
        size_t i = sizeof(tmp), len;

        do {
            tmp[--i] = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        if (v < 0)
            tmp[--i] = '-';
        len = sizeof(tmp) - i;
        memcpy(buf, tmp + i, len);
        buf[len] = '\0';
        return len;
    }
    for (prec = 15; prec <= 17; prec++) {
        n = snprintf(buf, CODEC_NUMBER_MAX, "%.*g", prec, d);
        CHECK(n > 0 && n < CODEC_NUMBER_MAX);
        if (strtod(buf, NULL) == d)
            break;
    }
    return (size_t)n;
}

/* SipHash-1-3 (Aumasson and Bernstein): a keyed hash, so an attacker who does not know the key
 * cannot make many keys share a bucket. */
static uint64_t rotl64(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

#define SIPROUND                                                                                   \
    do {                                                                                           \
        v0 += v1;                                                                                  \
        v1 = rotl64(v1, 13);                                                                       \
        v1 ^= v0;                                                                                  \
        v0 = rotl64(v0, 32);                                                                       \
        v2 += v3;                                                                                  \
        v3 = rotl64(v3, 16);                                                                       \
        v3 ^= v2;                                                                                  \
        v0 += v3;                                                                                  \
        v3 = rotl64(v3, 21);                                                                       \
        v3 ^= v0;                                                                                  \
        v2 += v1;                                                                                  \
        v1 = rotl64(v1, 17);                                                                       \
        v1 ^= v2;                                                                                  \
        v2 = rotl64(v2, 32);                                                                       \
    } while (0)

static uint64_t siphash13(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t v0 = hash_key[0] ^ 0x736f6d6570736575u;
    uint64_t v1 = hash_key[1] ^ 0x646f72616e646f6du;
    uint64_t v2 = hash_key[0] ^ 0x6c7967656e657261u;
    uint64_t v3 = hash_key[1] ^ 0x7465646279746573u;
    uint64_t m, b = (uint64_t)len << 56;
    size_t i, tail = len & 7;

    for (i = 0; i + 8 <= len; i += 8) {
        int k;

        m = 0;
        for (k = 7; k >= 0; k--)
            m = m << 8 | p[i + (size_t)k];
        v3 ^= m;
        SIPROUND;
        v0 ^= m;
    }
    for (; tail; tail--)
        b |= (uint64_t)p[i + tail - 1] << (8 * (tail - 1));
    v3 ^= b;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

struct codec_strmap_slot {
    const char *key; /* NULL: empty */
    uint64_t hash;
    void *val;
};

static int strmap_grow(struct codec_strmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 16, i;
    struct codec_strmap_slot *slots;

    slots = ccalloc(cap, sizeof(*slots));
    if (!slots)
        return -ENOMEM;
    for (i = 0; i < m->cap; i++) {
        size_t j;

        if (!m->slots[i].key)
            continue;
        for (j = m->slots[i].hash & (cap - 1); slots[j].key; j = (j + 1) & (cap - 1))
            ;
        slots[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return 0;
}

/* Index of key's slot, or of the empty slot where it would go; the map must not be empty. */
static size_t strmap_slot(const struct codec_strmap *m, const char *key, uint64_t h)
{
    size_t j;

    for (j = h & (m->cap - 1); m->slots[j].key; j = (j + 1) & (m->cap - 1)) {
        if (m->slots[j].hash == h && strcmp(m->slots[j].key, key) == 0)
            break;
    }
    return j;
}

int codec__strmap_add(struct codec_strmap *m, const char *key, void *val)
{
    uint64_t h = siphash13(key, strlen(key));
    size_t j;
    int r;

    if ((m->n + 1) * 2 > m->cap) {
        r = strmap_grow(m);
        if (r < 0)
            return r;
    }
    j = strmap_slot(m, key, h);
    if (m->slots[j].key)
        return 1;
    m->slots[j].key = key;
    m->slots[j].hash = h;
    m->slots[j].val = val;
    m->n++;
    return 0;
}

void **codec__strmap_find(const struct codec_strmap *m, const char *key)
{
    size_t j;

    if (!m->n)
        return NULL;
    j = strmap_slot(m, key, siphash13(key, strlen(key)));
    return m->slots[j].key ? &m->slots[j].val : NULL;
}

void codec__strmap_release(struct codec_strmap *m)
{
    FREE_AND_NULL(m->slots);
    m->cap = 0;
    m->n = 0;
}

int codec_read_file(const char *path, size_t max_bytes, struct strbuf *out)
{
    size_t start = out->len, total = 0;
    bool close_fd = false;
    struct stat st;
    int fd = STDIN_FILENO, r;

    if (strcmp(path, "-") != 0) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return -errno;
        close_fd = true;
    }
    if (fstat(fd, &st) < 0) {
        r = -errno;
        goto out;
    }
    if (S_ISDIR(st.st_mode)) {
        r = -EISDIR;
        goto out;
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0)
        strbuf_grow(out, (size_t)st.st_size < max_bytes ? (size_t)st.st_size + 1 : max_bytes + 1);
    for (;;) {
        size_t want;
        ssize_t n;

        strbuf_grow(out, 4096);
        want = out->alloc - out->len - 1;
        /* Read one byte past the bound so "exactly max_bytes" and "more" can be told apart. */
        if (max_bytes - total < want)
            want = max_bytes - total + 1;
        n = read(fd, out->buf + out->len, want);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            r = -errno;
            goto out;
        }
        if (n == 0)
            break;
        out->len += (size_t)n;
        out->buf[out->len] = '\0';
        total += (size_t)n;
        if (total > max_bytes) {
            r = -E2BIG;
            goto out;
        }
    }
    r = 0;
out:
    if (r < 0)
        strbuf_setlen(out, start);
    if (close_fd)
        (void)close(fd);
    return r;
}
