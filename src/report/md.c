/* md.c - the report as Markdown (report.md): the numbers table, the curve
 * as a table of measured and model points, and the stage costs; and the
 * writer of the three files (report.html, report.md, report.json).
 *
 * Notes: Markdown cells escape '|' so a method text cannot break a table.
 * The HTML page must stay under RP_HTML_MAX_BYTES; a page over it is an
 * error (a section grew beyond its caps), never silently truncated. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/outfile.h"
#include "report_int.h"

static void cell(gx_rbuf *b, const char *s)
{
    rb_puts(b, " ");
    for (; *s; s++) {
        if (*s == '|')
            rb_puts(b, "\\|");
        else if (*s == '\n')
            rb_puts(b, " ");
        else
            rb_put(b, s, 1);
    }
    rb_puts(b, " |");
}

static void curve_md(gx_rbuf *b, const json_t *doc)
{
    json_t *pts = rp_path(doc, "data.curve.points"), *mod = rp_path(doc, "model.curve");
    size_t n = json_array_size(pts) ? json_array_size(pts) : json_array_size(mod);
    rb_puts(b, "\n## Latency versus footprint\n\n");
    if (!n) {
        rb_puts(b, "No curve (no discovery data, no model run).\n");
        return;
    }
    rb_puts(b, "| footprint bytes | measured cycles | probes | resident in level 1 | model cycles |\n"
               "|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < n; i++) {
        json_t *p = json_array_get(pts, i), *m = json_array_get(mod, i);
        double f = p ? rp_num(p, "footprint_bytes") : rp_num(m, "footprint_bytes");
        char a[32] = "-", c[32] = "-", d[32] = "-", e[32] = "-";
        if (isfinite(rp_num(p, "cycles")))
            snprintf(a, sizeof a, "%.1f", rp_num(p, "cycles"));
        if (isfinite(rp_num(p, "probes")))
            snprintf(c, sizeof c, "%.0f", rp_num(p, "probes"));
        if (isfinite(rp_num(p, "resident_first")))
            snprintf(d, sizeof d, "%.2f", rp_num(p, "resident_first"));
        if (isfinite(rp_num(m, "cycles")))
            snprintf(e, sizeof e, "%.1f", rp_num(m, "cycles"));
        rb_printf(b, "| %.0f | %s | %s | %s | %s |\n", f, a, c, d, e);
    }
    json_t *pl;
    size_t i;
    json_array_foreach(rp_path(doc, "data.curve.plateaus"), i, pl)
        rb_printf(b, "%sPlateau %zu: points %.0f..%.0f at %.1f cycles\n", i ? "" : "\n", i + 1,
                  rp_num(pl, "first"), rp_num(pl, "last"), rp_num(pl, "cycles"));
    const char *note = rp_str(json_object_get(doc, "model"), "note");
    if (note[0])
        rb_printf(b, "\nModel curve not shown: %s\n", note);
}

int rp_render_md(const json_t *doc, gx_rbuf *b)
{
    const json_t *p = json_object_get(doc, "profile");
    rb_printf(b, "# gpuxray report: %s\n\nProfile kind %s, target `%s`, device %s, created %s. "
                 "Latencies in SM clock cycles. Plots: report.html.\n\n## Numbers\n\n"
                 "| parameter | value | confidence | samples | method |\n|---|---|---:|---|---|\n",
              rp_str(p, "name"), rp_str(p, "kind"), rp_str(p, "target"), rp_str(p, "device"),
              rp_str(p, "created"));
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, "numbers"), i, r)
    {
        char c[32] = "-";
        if (isfinite(rp_num(r, "confidence")))
            snprintf(c, sizeof c, "%.3f", rp_num(r, "confidence"));
        rb_puts(b, "|");
        cell(b, rp_str(r, "parameter"));
        cell(b, rp_str(r, "value"));
        cell(b, c);
        cell(b, json_is_string(json_object_get(r, "samples")) ? rp_str(r, "samples") : "-");
        cell(b, rp_str(r, "method"));
        rb_puts(b, "\n");
    }
    curve_md(b, doc);
    json_t *st = rp_path(doc, "data.stages.stages");
    if (json_array_size(st)) {
        rb_puts(b, "\n## Cost of each stage\n\n| stage | status | calls | accesses | serial | "
                   "seconds | note |\n|---|---|---:|---:|---:|---:|---|\n");
        json_t *s;
        json_array_foreach(st, i, s)
        {
            rb_puts(b, "|");
            cell(b, rp_str(s, "stage"));
            cell(b, rp_str(s, "status"));
            rb_printf(b, " %.0f | %.0f | %.0f | %.2f |", rp_num(s, "calls"), rp_num(s, "accesses"),
                      rp_num(s, "serial_accesses"), rp_num(s, "seconds"));
            cell(b, rp_str(s, "note"));
            rb_puts(b, "\n");
        }
    }
    json_t *data = json_object_get(doc, "data");
    if (json_object_size(data)) {
        rb_puts(b, "\n## Raw data series\n\n");
        const char *k;
        json_t *v;
        json_object_foreach(data, k, v) rb_printf(b, "- `%s`: %s\n", k, rp_str(v, "method")[0] ? rp_str(v, "method") : "(no method given)");
    }
    return b->failed ? GX_ENOMEM : GX_OK;
}

/* path with its ".html" suffix (if any) replaced by ext. */
static char *sibling(const char *html, const char *ext)
{
    size_t n = strlen(html);
    size_t base = n > 5 && !strcmp(html + n - 5, ".html") ? n - 5 : n;
    char *s = malloc(base + strlen(ext) + 1);
    if (s) {
        memcpy(s, html, base);
        strcpy(s + base, ext);
    }
    return s;
}

int gx_report_write(const gx_profile *p, const gx_report_opts *o, const char *html_path,
                    gx_msg *msg)
{
    if (!p || !o || !o->profile_path || !html_path)
        return gx_fail(msg, GX_EINVAL, "gx_report_write: NULL argument");
    json_t *doc = NULL;
    int rc = rp_build_doc(p, o, &doc, msg);
    if (rc != GX_OK)
        return rc;
    gx_rbuf h, m;
    rb_init(&h);
    rb_init(&m);
    char *js = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
    char *md_path = sibling(html_path, ".md"), *js_path = sibling(html_path, ".json");
    if (!js || !md_path || !js_path || rp_render_html(doc, &h) != GX_OK ||
        rp_render_md(doc, &m) != GX_OK) {
        rc = gx_fail(msg, GX_ENOMEM, "out of memory building the report");
    } else if (h.len >= RP_HTML_MAX_BYTES) {
        rc = gx_fail(msg, GX_ERANGE, "report page is %zu bytes, over its %u-byte budget", h.len,
                     RP_HTML_MAX_BYTES);
    } else {
        rc = gx_out_write_file(html_path, h.s, h.len, msg);
        if (rc == GX_OK && strcmp(html_path, "-") != 0) {
            rc = gx_out_write_file(md_path, m.s, m.len, msg);
            if (rc == GX_OK)
                rc = gx_out_write_file(js_path, js, strlen(js), msg);
        }
    }
    free(js);
    free(md_path);
    free(js_path);
    rb_free(&h);
    rb_free(&m);
    json_decref(doc);
    return rc;
}
