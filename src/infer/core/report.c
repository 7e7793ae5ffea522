/* report.c - the discovery report: rows of (parameter, value, method,
 * confidence) added by the stages, the cost of each stage, the raw
 * measurements the stages record for the HTML report (series of JSON
 * objects, kept only when discovery records), progress lines, and the
 * human-readable table (like the seed article's).
 *
 * Notes: library code does not print except here, where the caller passes
 * the FILE (the CLI chooses stdout / stderr). A recording hook never
 * changes what a stage measures: it copies values the stage already has. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gpuxray/clock.h"
#include "../infer.h"

void infer_report_row(gx_infer *ctx, const char *parameter, const char *value,
                      const char *method, double confidence, int in_profile)
{
    gx_report *r = ctx->report;
    if (!r || r->n_rows >= GX_REPORT_MAX_ROWS)
        return;
    gx_report_row *row = &r->rows[r->n_rows++];
    snprintf(row->parameter, sizeof row->parameter, "%s", parameter ? parameter : "");
    snprintf(row->value, sizeof row->value, "%s", value ? value : "");
    snprintf(row->method, sizeof row->method, "%s", method ? method : "");
    row->confidence = confidence;
    row->in_profile = in_profile;
    row->superseded = 0;
}

void infer_report_supersede(gx_infer *ctx, const char *parameter)
{
    gx_report *r = ctx->report;
    for (int i = 0; r && parameter && i < r->n_rows; i++)
        if (strcmp(r->rows[i].parameter, parameter) == 0) {
            r->rows[i].superseded = 1;
            r->rows[i].in_profile = 0;
        }
}

int infer_recording(const gx_infer *ctx)
{
    return ctx && ctx->report && ctx->report->data;
}

json_t *infer_json_num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* The object data[series], created on first use; NULL when not recording. */
static json_t *series_obj(gx_infer *ctx, const char *series)
{
    if (!infer_recording(ctx) || !series)
        return NULL;
    json_t *root = ctx->report->data;
    json_t *o = json_object_get(root, series);
    if (!json_is_object(o)) {
        o = json_object();
        if (!o || json_object_set_new(root, series, o) != 0)
            return NULL;
    }
    return o;
}

void infer_data_set(gx_infer *ctx, const char *series, const char *key, json_t *value)
{
    json_t *o = series_obj(ctx, series);
    if (!o || !key || !value) {
        json_decref(value);
        return;
    }
    json_object_set_new(o, key, value);
}

void infer_data_append(gx_infer *ctx, const char *series, const char *key, json_t *item)
{
    json_t *o = series_obj(ctx, series);
    if (!o || !key || !item) {
        json_decref(item);
        return;
    }
    json_t *a = json_object_get(o, key);
    if (!json_is_array(a)) {
        a = json_array();
        if (!a || json_object_set_new(o, key, a) != 0) {
            json_decref(item);
            return;
        }
    }
    json_array_append_new(a, item);
}

void gx_report_free_data(gx_report *r)
{
    if (!r)
        return;
    json_decref((json_t *)r->data);
    r->data = NULL;
}

void infer_progress(gx_infer *ctx, const char *fmt, ...)
{
    if (!ctx->progress)
        return;
    double now = gx_monotonic_seconds();
    if (ctx->progress_t0 <= 0)
        ctx->progress_t0 = now;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    ctx->progress(ctx->progress_user, now - ctx->progress_t0, line);
}

void gx_progress_print(void *user, double seconds, const char *line)
{
    FILE *out = user ? (FILE *)user : stderr;
    fprintf(out, "gpuxray: [%6.1f s] %s\n", seconds, line);
}

static void rule(FILE *out, int width)
{
    for (int i = 0; i < width; i++)
        fputc('-', out);
    fputc('\n', out);
}

void gx_report_print(const gx_report *r, FILE *out)
{
    if (!r)
        return;
    int wp = 9, wv = 5;
    for (int i = 0; i < r->n_rows; i++) {
        int lp = (int)strlen(r->rows[i].parameter), lv = (int)strlen(r->rows[i].value);
        wp = lp > wp ? lp : wp;
        wv = lv > wv ? lv : wv;
    }
    if (wv > 48)
        wv = 48;
    fprintf(out, "%-*s  %-*s  %-10s  %s\n", wp, "parameter", wv, "value", "confidence", "method");
    rule(out, wp + wv + 16 + 40);
    for (int i = 0; i < r->n_rows; i++) {
        const gx_report_row *row = &r->rows[i];
        char conf[24];
        if (isnan(row->confidence))
            snprintf(conf, sizeof conf, "-");
        else
            snprintf(conf, sizeof conf, "%.3f%s", row->confidence,
                     row->superseded ? " tried" : row->in_profile ? "" : " LOW");
        const char *note = row->superseded ? " [tried first; a later row decides]"
                           : !row->in_profile && !isnan(row->confidence)
                               ? " [not confident: left out of the profile]"
                               : "";
        fprintf(out, "%-*s  %-*s  %-10s  %s%s\n", wp, row->parameter, wv, row->value, conf,
                row->method, note);
    }
    fputc('\n', out);
    fprintf(out, "%-8s  %-10s  %12s  %14s  %14s  %9s  %s\n", "stage", "status", "calls",
            "accesses", "serial", "seconds", "note");
    rule(out, 96);
    uint64_t calls = 0, acc = 0, ser = 0;
    double secs = 0;
    for (int i = 0; i < r->n_stages; i++) {
        const gx_stage_cost *s = &r->stages[i];
        const char *st = s->status == GX_OK         ? "ok"
                         : s->status == GX_EUNSURE ? "unsure"
                         : s->status == GX_EUNSUPPORTED ? "not built"
                                                       : gx_errname(s->status);
        fprintf(out, "%-8s  %-10s  %12llu  %14llu  %14llu  %9.2f  %s\n", s->stage, st,
                (unsigned long long)s->calls, (unsigned long long)s->accesses,
                (unsigned long long)s->serial_accesses, s->seconds, s->note);
        calls += s->calls;
        acc += s->accesses;
        ser += s->serial_accesses;
        secs += s->seconds;
    }
    fprintf(out, "%-8s  %-10s  %12llu  %14llu  %14llu  %9.2f\n", "total", "",
            (unsigned long long)calls, (unsigned long long)acc, (unsigned long long)ser, secs);
}
