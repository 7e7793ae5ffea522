/* clock.h - wall-clock time for cost reports and limits (monotonic, so a
 * clock change during a run cannot make a duration negative). */
#ifndef GPUXRAY_CLOCK_H
#define GPUXRAY_CLOCK_H

/* Seconds since an arbitrary fixed point (CLOCK_MONOTONIC). */
double gx_monotonic_seconds(void);

#endif
