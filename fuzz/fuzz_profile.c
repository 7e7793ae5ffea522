/* fuzz_profile.c - libFuzzer harness: the profile reader and validator.
 * Input: any bytes, read as a profile's JSON text. A profile that parses
 * (and so passed gx_profile_validate) is written back to JSON and read
 * again: the writer must produce text its own reader accepts (a value the
 * validator lets through but the writer cannot express, such as a non-finite
 * number, is a bug), and the second validation must agree. Crashes, leaks
 * and undefined behaviour are what the sanitizers report. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0'; /* an embedded NUL ends the text, as for a file read as a string */
    gx_profile *p = NULL;
    gx_msg m;
    if (gx_profile_parse(text, "fuzz", &p, &m) == GX_OK) {
        if (gx_profile_validate(p, &m) != GX_OK)
            abort(); /* parse returned a profile its validator rejects */
        char *again = gx_profile_to_json(p);
        if (!again)
            abort(); /* a valid profile the writer cannot serialise */
        gx_profile *q = NULL;
        if (gx_profile_parse(again, "fuzz-rewritten", &q, &m) != GX_OK)
            abort(); /* the writer's output is not a valid profile */
        gx_profile_free(q);
        free(again);
    }
    gx_profile_free(p);
    free(text);
    return 0;
}
