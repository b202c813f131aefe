/*
 * Writes the HTML report of two made-up runs to stdout (tests only): what `koord sim` writes,
 * with known figures, for tests/e2e/test_sim_report_html.sh to open in a real browser. The
 * second run's name tries to close the data's script element.
 */
#include <stdio.h>

#include "base/base.h"
#include "sim/report.h"

int main(void)
{
    static const char *const names[2] = {"colocation off", "colocation on</script><b>"};
    struct sim_report_meta meta = {.trace = "sample-trace.csv",
                                   .nodes = "2 synthetic nodes",
                                   .nnodes = 2,
                                   .npods = 10,
                                   .seed = 1,
                                   .speed = 100,
                                   .model = "sample"};
    struct sim_run runs[2] = {{0}};
    int r;

    for (int j = 0; j < 2; j++) {
        runs[j].name = names[j];
        runs[j].colocation = j;
        runs[j].nsamples = 48;
        runs[j].samples = xcalloc(runs[j].nsamples, sizeof(struct sim_sample));
        for (size_t i = 0; i < runs[j].nsamples; i++) {
            struct sim_sample *s = &runs[j].samples[i];
            /* CPU: 20 % without colocation, 50 % with it; one sample each hour. */
            s->trace_s = (double)i * 3600 + j * 900;
            s->cpu_capacity = 16000;
            s->mem_capacity = 64LL << 30;
            s->ls_cpu_used = 3200;
            s->be_cpu_used = j ? 4800 : 0;
            s->cpu_used = s->ls_cpu_used + s->be_cpu_used;
            s->mem_used = (16LL << 30) + (j ? 16LL << 30 : 0);
            s->batch_cpu_allocatable = j ? 9000 : 0;
            s->batch_cpu_requested = j ? 6000 : 0;
            s->be_running = j ? 12 : 4;
            s->be_pending = j ? 1 : 9;
        }
        if (sim_run_summarise(&runs[j]) < 0)
            return 1;
    }
    r = sim_report_html(stdout, &meta, runs, 2);
    sim_run_release(&runs[0]);
    sim_run_release(&runs[1]);
    return r < 0 ? 1 : 0;
}
