/* fuzz_trace_binary.c - libFuzzer harness: the binary trace reader through
 * its public API (gx_trace_parse_binary), and the dispatcher gx_trace_parse.
 * The input is tried as given and once behind the magic (GX_TRACE_MAGIC), so
 * the fuzzer reaches the header and record checks without having to guess
 * the magic first. A trace that parses is checked as in fuzz_trace_text.c;
 * the dispatcher's reading is checked against the column decoder
 * (cols_check.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cols_check.h"
#include "gpuxray/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const gx_trace *t, uint32_t sm_limit)
{
    for (uint64_t i = 0; i < t->n; i++) {
        const gx_trace_rec *r = &t->rec[i];
        if (gx_trace_check(r, sm_limit, NULL) != GX_OK)
                abort(); /* the reader returned a record its own check rejects */
    }
}

static void one(const void *buf, size_t len, uint32_t sm_limit, int dispatch)
{
    gx_trace t;
    gx_trace_init(&t);
    gx_msg m;
    int rc = dispatch ? gx_trace_parse(buf, len, "fuzz", sm_limit, &t, &m)
                      : gx_trace_parse_binary(buf, len, "fuzz", sm_limit, &t, &m);
    if (rc == GX_OK)
        check(&t, sm_limit);
    /* the column decoder of the same reader must agree (the dispatcher's
     * reading, or the binary parser's when the bytes are binary) */
    if (dispatch || gx_trace_is_binary(buf, len))
        cols_check(buf, len, sm_limit, &t, rc == GX_OK);
    gx_trace_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint32_t sm_limit = data[0];
    one(data + 1, size - 1, sm_limit, 0);
    unsigned char *b = malloc(size - 1 + GX_TRACE_MAGIC_BYTES);
    if (!b)
        return 0;
    memcpy(b, GX_TRACE_MAGIC, GX_TRACE_MAGIC_BYTES);
    memcpy(b + GX_TRACE_MAGIC_BYTES, data + 1, size - 1);
    one(b, size - 1 + GX_TRACE_MAGIC_BYTES, sm_limit, 1);
    free(b);
    return 0;
}
