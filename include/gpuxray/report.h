/* report.h - what the numbers mean: the discovery report as one
 * self-contained HTML page (inline SVG, no script, no network) plus
 * Markdown and JSON, and the raw measurement files discovery writes for it.
 *
 * Raw data (gx_report_data_save / _load): one JSON file per series in a
 * directory, each {"format": "gpuxray-data", "version": 1, "series": NAME,
 * ...}; the series are listed in docs/report.md. Any such file in the
 * directory is loaded (other tools may add series, e.g. "tlb", "smem");
 * other files are ignored.
 *
 * Notes: library code: returns gx error codes with a message, never prints.
 * Files are written atomically (temporary file + rename). */
#ifndef GPUXRAY_REPORT_H
#define GPUXRAY_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "gpuxray/discover.h"
#include "gpuxray/error.h"
#include "gpuxray/profile.h"

#define GX_DATA_FORMAT "gpuxray-data"
#define GX_DATA_VERSION 1
#define GX_REPORT_FORMAT "gpuxray-report"

/* Write r->data's series, plus "stages" (costs) and "rows" (the table),
 * as DIR/<series>.json (DIR is created when missing). */
int gx_report_data_save(const gx_report *r, const char *dir, gx_msg *msg);
/* Load every gpuxray-data file of dir into *data (a json_t * object keyed
 * by series; caller releases it with gx_report_data_release). */
int gx_report_data_load(const char *dir, void **data, gx_msg *msg);
void gx_report_data_release(void *data);

typedef struct gx_report_opts {
    const char *profile_path; /* the profile file (its model runs as sim:PATH); required */
    const void *data;         /* raw data (gx_report_data_load) or NULL */
    int model;                /* 1: run the model's chase curve over the same footprints */
    uint64_t seed;            /* model seed */
} gx_report_opts;

/* Build the report of profile p and write html_path plus the .md and .json
 * next to it (html_path with its ".html" replaced; "-" writes the page
 * alone to standard output). Missing data sections say what to run to get
 * them; a model that cannot run is named with its reason in the page. */
int gx_report_write(const gx_profile *p, const gx_report_opts *o, const char *html_path,
                    gx_msg *msg);

#endif
