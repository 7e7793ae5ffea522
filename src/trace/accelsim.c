/* accelsim.c - placeholder replaced below */
#include "reader_internal.h"
int gx_accelsim_detect(const unsigned char *data, size_t len)
{
    (void)data;
    (void)len;
    return 0;
}
int gx_accelsim_decode(gx_trace_reader *r, gx_trace_rec *out, size_t max, size_t *n, gx_msg *msg)
{
    (void)out;
    (void)max;
    *n = 0;
    return gx_fail(msg, GX_EUNSUPPORTED, "%s: Accel-Sim traces are not read yet", r->source);
}
void gx_accelsim_free(gx_trace_reader *r)
{
    (void)r;
}
