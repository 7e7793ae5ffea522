/* clock.c - see clock.h. */
#include "gpuxray/clock.h"

#include <time.h>

double gx_monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
