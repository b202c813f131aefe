/* Shared by the report writers (report.c, report_html.c): the summary's rows. */
#ifndef KOORD_SIM_REPORT_INT_H
#define KOORD_SIM_REPORT_INT_H

#include <stddef.h>
#include <stdio.h>

#include "base/strbuf.h"
#include "sim/outcome.h"

struct sim_report_row {
    const char *name;
    void (*fmt)(struct strbuf *sb, const struct sim_run *r);
};

extern const struct sim_report_row sim_report_rows[];
extern const size_t sim_report_nrows;

/* Writes out to f, releases it; 0 or -EIO. The writers build a whole file in memory first. */
int sim_report_flush(FILE *f, struct strbuf *out);

#endif
