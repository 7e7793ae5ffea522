/* fuzz_trace_text.c - libFuzzer harness: the text trace reader through its
 * public API (gx_trace_parse_text). The first byte picks the SM limit (0 =
 * none, else 1..255) so the limit check is fuzzed too; the rest is the text.
 * A trace that parses is checked for the reader's promises: every record's
 * size is 1..GX_TRACE_MAX_SIZE, its op valid, its SM below the limit, and
 * no access wraps past 2^64. */
#include <stdint.h>
#include <stdlib.h>

#include "gpuxray/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint32_t sm_limit = data[0];
    gx_trace t;
    gx_trace_init(&t);
    gx_msg m;
    if (gx_trace_parse_text((const char *)data + 1, size - 1, "fuzz", sm_limit, &t, &m) ==
        GX_OK) {
        for (uint64_t i = 0; i < t.n; i++) {
            const gx_trace_rec *r = &t.rec[i];
            if (r->size < 1 || r->size > GX_TRACE_MAX_SIZE || r->op > GX_TRACE_ATOMIC ||
                (sm_limit && r->sm >= sm_limit) || r->addr + (r->size - 1u) < r->addr)
                abort();
        }
    }
    gx_trace_free(&t);
    return 0;
}
