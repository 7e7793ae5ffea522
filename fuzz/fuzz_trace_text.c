/* fuzz_trace_text.c - libFuzzer harness: the text trace reader through its
 * public API (gx_trace_parse_text). The first byte picks the SM limit (0 =
 * none, else 1..255) so the limit check is fuzzed too; the rest is the text.
 * A trace that parses is checked for the reader's promise: every record
 * passes gx_trace_check (op, size, SM below the limit, no access wrapping
 * past 2^64, MAP / INV fields); and the dispatcher's reading of the same
 * bytes against the column decoder (cols_check.h). */
#include <stdint.h>
#include <stdlib.h>

#include "cols_check.h"
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
            if (gx_trace_check(r, sm_limit, NULL) != GX_OK)
                abort(); /* the reader returned a record its own check rejects */
        }
    }
    gx_trace_free(&t);
    /* the dispatcher's reading (text unless the bytes say otherwise) against
     * the column decoder on the same bytes (cols_check.h) */
    gx_trace_init(&t);
    int rc = gx_trace_parse((const char *)data + 1, size - 1, "fuzz", sm_limit, &t, &m);
    cols_check(data + 1, size - 1, sm_limit, &t, rc == GX_OK);
    gx_trace_free(&t);
    return 0;
}
