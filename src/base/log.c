/* logfmt logger; see log.h. */
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "base/strbuf.h"

enum log_level log_max_level = LOG_INFO;

int log_set_level(const char *name)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};

    for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
        if (!strcmp(name, names[i])) {
            log_max_level = (enum log_level)i;
            return 0;
        }
    }
    return -EINVAL;
}

void log_emit(enum log_level level, const char *comp, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    struct strbuf msg = STRBUF_INIT;
    char ts[32];
    struct tm tm;
    time_t now = time(NULL);
    va_list ap;

    (void)gmtime_r(&now, &tm);
    (void)strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
    va_start(ap, fmt);
    strbuf_vaddf(&msg, fmt, ap);
    va_end(ap);
    (void)fprintf(stderr, "ts=%s level=%s comp=%s msg=", ts, names[level], comp);
    {
        struct strbuf q = STRBUF_INIT;
        strbuf_add_json_str(&q, msg.buf);
        (void)fprintf(stderr, "%s\n", q.buf);
        strbuf_release(&q);
    }
    strbuf_release(&msg);
}
