/* html.c - the report page: one self-contained HTML file. Static inline
 * SVG plots (heat maps as embedded PNG), tables, no script, no external
 * resource (a Content-Security-Policy forbids any), so it reads with
 * JavaScript off and makes no network request.
 *
 * Sections: numbers (value, confidence, samples, method); the latency
 * versus footprint curve with its plateaus, the levels and the model's
 * prediction; the per-(SM, slice) latency map; the slice classes of one
 * page; the ways test; policy agreement per candidate; TLB and shared
 * memory when the profile or the data has them; the cost of each stage.
 * A section without data says which command records it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_int.h"

#define PLOT_W 760
#define PLOT_H 360
#define MAP_MAX_ROWS 1024   /* classes drawn in the latency map at most */
#define PAGE_COLS 128       /* lines per row of the page picture */
#define CURVE_MAX 256

static const char *STYLE =
    "body{font-family:sans-serif;margin:24px auto;max-width:980px;color:#222;line-height:1.4}"
    "h1{font-size:22px;margin-bottom:4px}h2{font-size:17px;margin-top:28px;border-bottom:1px "
    "solid #ccc}table{border-collapse:collapse;font-size:12px;margin:8px 0}"
    "td,th{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}"
    "th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    ".low{color:#a40}.cap{font-size:12px;color:#555;max-width:900px}.chosen{background:#eef7e8}"
    "code{font-size:12px}svg{display:block;margin:6px 0}";

static void section(gx_rbuf *b, const char *id, const char *title)
{
    rb_printf(b, "<h2 id=\"%s\">", id);
    rb_esc(b, title);
    rb_puts(b, "</h2>\n");
}

static void caption(gx_rbuf *b, const char *text)
{
    rb_puts(b, "<p class=\"cap\">");
    rb_esc(b, text);
    rb_puts(b, "</p>\n");
}

static void missing(gx_rbuf *b, const char *what)
{
    rb_puts(b, "<p class=\"cap\"><em>");
    rb_esc(b, what);
    rb_puts(b, "</em></p>\n");
}

/* ---- numbers ------------------------------------------------------------ */

static void numbers_table(gx_rbuf *b, const json_t *doc)
{
    section(b, "numbers", "Numbers: value, confidence, samples, method");
    rb_puts(b, "<table><tr><th>parameter</th><th>value</th><th>confidence</th><th>samples</th>"
               "<th>method</th></tr>\n");
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, "numbers"), i, r)
    {
        double c = rp_num(r, "confidence");
        int low = isfinite(c) && c < 0.9;
        rb_puts(b, "<tr><td><code>");
        rb_esc(b, rp_str(r, "parameter"));
        rb_puts(b, "</code></td><td>");
        rb_esc(b, rp_str(r, "value"));
        if (isfinite(c))
            rb_printf(b, "</td><td class=\"n%s\">%.3f", low ? " low" : "", c);
        else
            rb_puts(b, "</td><td class=\"n\">-");
        rb_puts(b, "</td><td>");
        rb_esc(b, json_is_string(json_object_get(r, "samples")) ? rp_str(r, "samples") : "-");
        rb_puts(b, "</td><td>");
        rb_esc(b, rp_str(r, "method"));
        rb_puts(b, "</td></tr>\n");
    }
    rb_puts(b, "</table>\n");
}

/* ---- the curve ---------------------------------------------------------- */

static size_t get_xy(const json_t *arr, const char *kx, const char *ky, double *x, double *y,
                     size_t cap)
{
    size_t n = 0, i;
    json_t *p;
    json_array_foreach(arr, i, p) if (n < cap)
    {
        x[n] = rp_num(p, kx);
        y[n] = rp_num(p, ky);
        n++;
    }
    return n;
}

static void range_of(const double *v, size_t n, double *lo, double *hi)
{
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) {
            *lo = fmin(*lo, v[i]);
            *hi = fmax(*hi, v[i]);
        }
}

static void curve_plot(gx_rbuf *b, const json_t *doc)
{
    section(b, "curve", "Latency versus footprint");
    const json_t *data = json_object_get(doc, "data"), *curve = json_object_get(data, "curve");
    const json_t *model = json_object_get(doc, "model");
    static double mx[CURVE_MAX], my[CURVE_MAX], px[CURVE_MAX], py[CURVE_MAX];
    size_t nm = get_xy(json_object_get(curve, "points"), "footprint_bytes", "cycles", mx, my,
                       CURVE_MAX);
    size_t np = get_xy(json_object_get(model, "curve"), "footprint_bytes", "cycles", px, py,
                       CURVE_MAX);
    if (!nm && !np) {
        missing(b, "No curve: no discovery data (gpuxray discover --report DIR records it) and "
                   "no model run.");
        if (rp_str(model, "note")[0]) {
            rb_puts(b, "<p class=\"cap\">Model: ");
            rb_esc(b, rp_str(model, "note"));
            rb_puts(b, "</p>\n");
        }
        return;
    }
    double xlo = INFINITY, xhi = -INFINITY, ylo = 0, yhi = -INFINITY, dummy = INFINITY;
    range_of(mx, nm, &xlo, &xhi);
    range_of(px, np, &xlo, &xhi);
    range_of(my, nm, &dummy, &yhi);
    range_of(py, np, &dummy, &yhi);
    svg_axes a = {.x0 = 70, .y0 = 14, .w = PLOT_W - 90, .h = PLOT_H - 64, .xmin = xlo / 1.3,
                  .xmax = xhi * 1.3, .ymin = ylo, .ymax = yhi * 1.08, .xlog2 = 1};
    svg_open(b, PLOT_W, PLOT_H, "latency versus footprint");
    svg_frame(b, &a, "footprint (one SM's pointer chase)", "cycles per access", 1);
    /* levels: vertical lines at the measured capacities */
    size_t i;
    json_t *lv;
    json_array_foreach(json_object_get(curve, "levels"), i, lv)
    {
        double c = rp_num(lv, "capacity_bytes");
        if (!(c > a.xmin && c < a.xmax))
            continue;
        double x = svg_x(&a, c);
        char t[48], l[96];
        fmt_bytes(c, t, sizeof t);
        snprintf(l, sizeof l, "level %zu: %s", i + 1, t);
        rb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
                     "stroke-dasharray=\"2 3\"/>\n",
                  x, a.y0, x, a.y0 + a.h);
        svg_text(b, x + 3, a.y0 + 12 + 12.0 * (double)i, "start", 10, l);
    }
    /* plateaus: the changepoint segments of the measured curve */
    json_t *pl;
    json_array_foreach(json_object_get(curve, "plateaus"), i, pl)
    {
        size_t f = (size_t)rp_num(pl, "first"), l = (size_t)rp_num(pl, "last");
        double y = rp_num(pl, "cycles");
        if (f >= nm || l >= nm || !isfinite(y))
            continue;
        double x0 = svg_x(&a, mx[f] / (f == l ? 1.15 : 1)), x1 = svg_x(&a, mx[l] * (f == l ? 1.15 : 1));
        rb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#2a9d3a\" "
                     "stroke-width=\"7\" stroke-opacity=\"0.35\"/>\n",
                  x0, svg_y(&a, y), x1, svg_y(&a, y));
        char t[48];
        snprintf(t, sizeof t, "%.0f", y);
        svg_text(b, x0, svg_y(&a, y) - 6, "start", 10, t);
    }
    if (np)
        svg_line(b, &a, px, py, np, "#e07b00", 2, "6 4", 0);
    if (nm)
        svg_line(b, &a, mx, my, nm, "#1f5fbf", 1.6, NULL, 1);
    double lx = a.x0 + 12, ly = a.y0 + a.h - 50;
    if (nm)
        svg_legend(b, lx, ly, "#1f5fbf", NULL, "measured (discovery's levels sweep)");
    if (np)
        svg_legend(b, lx, ly + 15, "#e07b00", "6 4", "model of this profile (sim target)");
    if (json_array_size(json_object_get(curve, "plateaus")))
        svg_legend(b, lx, ly + 30, "#2a9d3a", NULL, "detected plateaus (changepoints)");
    svg_close(b);
    char cap[1280];
    double probes = 0;
    json_t *pt;
    json_array_foreach(json_object_get(curve, "points"), i, pt) probes += rp_num(pt, "probes");
    snprintf(cap, sizeof cap,
             "Measured: %s. %zu footprints, %.0f timed steps each, %.0f probe pairs in all. "
             "Model: %s. A profile without a sim section carries no per-(SM, slice) skew: its "
             "model's plateaus sit at the base latencies, below a chase that pays SM 0's skew.",
             nm ? rp_str(curve, "method") : "none (no discovery data)", nm,
             rp_num(curve, "timed_steps"), probes,
             np ? rp_str(model, "method") : rp_str(model, "note"));
    caption(b, cap);
}

/* ---- heat maps ---------------------------------------------------------- */

static void latency_map(gx_rbuf *b, const json_t *doc)
{
    section(b, "smslice", "Latency per (SM, slice)");
    const json_t *m = rp_path(doc, "data.sm_slice");
    json_t *rows = json_object_get(m, "cycles"), *sms = json_object_get(m, "sms");
    size_t nr = json_array_size(rows), nc = json_array_size(sms);
    if (!nr || !nc) {
        missing(b, "No per-(SM, slice) latencies: run gpuxray discover --report DIR (the slices "
                   "stage records them).");
        return;
    }
    if (nr > MAP_MAX_ROWS)
        nr = MAP_MAX_ROWS;
    double *v = malloc(nr * nc * sizeof *v);
    uint8_t *rgb = malloc(nr * nc * 3);
    if (!v || !rgb) {
        free(v);
        free(rgb);
        return;
    }
    double lo = INFINITY, hi = -INFINITY;
    for (size_t r = 0; r < nr; r++)
        for (size_t c = 0; c < nc; c++) {
            json_t *x = json_array_get(json_array_get(rows, r), c);
            v[r * nc + c] = json_is_number(x) ? json_number_value(x) : NAN;
        }
    range_of(v, nr * nc, &lo, &hi);
    for (size_t k = 0; k < nr * nc; k++)
        color_seq(hi > lo ? (v[k] - lo) / (hi - lo) : 0.5, rgb + 3 * k);
    double cw = fmin(24.0, 560.0 / (double)nc), rh = fmax(2.0, fmin(12.0, 420.0 / (double)nr));
    double w = cw * (double)nc, h = rh * (double)nr;
    int W = (int)w + 190, H = (int)h + 60;
    svg_open(b, W, H, "latency per SM and slice class");
    svg_image(b, rgb, (uint32_t)nc, (uint32_t)nr, 60, 10, w, h);
    rb_printf(b, "<rect x=\"60\" y=\"10\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>\n", w, h);
    char t[64];
    for (size_t c = 0; c < nc; c += nc > 16 ? 4 : 1) {
        snprintf(t, sizeof t, "%lld", (long long)json_integer_value(json_array_get(sms, c)));
        svg_text(b, 60 + cw * ((double)c + 0.5), h + 24, "middle", 9, t);
    }
    svg_text(b, 60 + w / 2, h + 40, "middle", 11, "SM");
    for (size_t r = 0; r < nr; r += (size_t)fmax(1, ceil(12.0 / rh))) {
        snprintf(t, sizeof t, "%zu", r);
        svg_text(b, 56, 10 + rh * ((double)r + 0.5) + 3, "end", 9, t);
    }
    rb_printf(b, "<text transform=\"translate(20 %.1f) rotate(-90)\" text-anchor=\"middle\">slice class</text>\n",
              10 + h / 2);
    /* colour bar */
    uint8_t bar[64 * 3];
    for (int k = 0; k < 64; k++)
        color_seq(1.0 - k / 63.0, bar + 3 * k);
    svg_image(b, bar, 1, 64, w + 90, 10, 14, fmin(h, 200));
    snprintf(t, sizeof t, "%.0f cycles", hi);
    svg_text(b, w + 108, 20, "start", 10, t);
    snprintf(t, sizeof t, "%.0f cycles", lo);
    svg_text(b, w + 108, 10 + fmin(h, 200), "start", 10, t);
    svg_close(b);
    free(v);
    free(rgb);
    snprintf(t, sizeof t, "%.0f", rp_num(m, "lines_measured"));
    char cap[512];
    snprintf(cap, sizeof cap,
             "%s. %zu classes x %zu SMs; %s lines fingerprinted, %.0f reloads per (line, SM) and "
             "round, noise sigma %.1f cycles. Rows are slice classes (ids of discovery, not the "
             "hardware's numbering).",
             rp_str(m, "method"), json_array_size(rows), nc, t, rp_num(m, "reps"),
             rp_num(m, "sigma_cycles"));
    caption(b, cap);
}

static void page_classes(gx_rbuf *b, const json_t *doc)
{
    section(b, "page", "Slice classes of one page");
    const json_t *m = rp_path(doc, "data.slice_classes");
    json_t *cls = json_object_get(m, "classes");
    size_t n = json_array_size(cls);
    if (!n) {
        missing(b, "No slice classes: neither discovery data nor a slice hash in the profile.");
        return;
    }
    uint32_t cols = n < PAGE_COLS ? (uint32_t)n : PAGE_COLS;
    uint32_t rows = (uint32_t)((n + cols - 1) / cols);
    if (rows > 4096)
        rows = 4096;
    uint8_t *rgb = calloc((size_t)cols * rows, 3);
    if (!rgb)
        return;
    uint32_t maxc = 0;
    for (size_t i = 0; i < (size_t)cols * rows && i < n; i++) {
        json_int_t c = json_integer_value(json_array_get(cls, i));
        if (c < 0)
            continue;
        maxc = (uint32_t)c > maxc ? (uint32_t)c : maxc;
        color_cat((uint32_t)c, rgb + 3 * i);
    }
    double px = 640.0 / cols, w = 640, h = fmin(640.0, px * rows);
    svg_open(b, (int)w + 80, (int)h + 50, "slice class of every line of one page");
    svg_image(b, rgb, cols, rows, 60, 10, w, h);
    char t[96], a1[32], a2[32];
    double line = rp_num(m, "line_bytes");
    fmt_bytes(line * cols, a1, sizeof a1);
    snprintf(t, sizeof t, "%u lines (%s) per row", cols, a1);
    svg_text(b, 60 + w / 2, h + 26, "middle", 11, t);
    for (uint32_t r = 0; r < rows; r += rows > 32 ? rows / 8 : 4) {
        fmt_bytes(line * cols * r, a2, sizeof a2);
        svg_text(b, 56, 10 + h * r / rows + 8, "end", 9, a2);
    }
    svg_close(b);
    free(rgb);
    char cap[512];
    fmt_bytes(rp_num(m, "page_bytes"), a1, sizeof a1);
    snprintf(cap, sizeof cap,
             "%s. Page of %s, %.0f B lines, %u classes, one colour each. Held-out check: "
             "%.0f of %.0f lines agree.",
             rp_str(m, "method"), a1, line, maxc + 1,
             rp_num(m, "verified") - rp_num(m, "verify_errors"), rp_num(m, "verified"));
    caption(b, cap);
}

/* ---- ways, policy ------------------------------------------------------- */

static void ways_plot(gx_rbuf *b, const json_t *doc)
{
    section(b, "ways", "Ways test");
    const json_t *m = rp_path(doc, "data.ways");
    json_t *tr = json_object_get(m, "trials");
    size_t n = json_array_size(tr);
    if (!n) {
        missing(b, "No ways trials: run gpuxray discover --report DIR (the ways stage records "
                   "them).");
        return;
    }
    double wmax = 1, tmax = 1;
    size_t i;
    json_t *t;
    json_array_foreach(tr, i, t)
    {
        wmax = fmax(wmax, rp_num(t, "ways"));
        tmax = fmax(tmax, rp_num(t, "tests"));
    }
    double bw = fmin(40.0, 600.0 / (double)n), h = 180;
    svg_axes a = {.x0 = 60, .y0 = 14, .w = bw * (double)n, .h = h, .xmin = 0.5,
                  .xmax = (double)n + 0.5, .ymin = 0, .ymax = wmax * 1.25, .xint = 1};
    svg_open(b, (int)a.w + 120, (int)h + 60, "minimal eviction set size per trial");
    svg_frame(b, &a, "trial (one target line each)", "lines in the set", 0);
    json_array_foreach(tr, i, t)
    {
        double w = rp_num(t, "ways"), y = svg_y(&a, w);
        rb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#1f5fbf\"/>\n",
                  a.x0 + bw * (double)i + 2, y, bw - 4, a.y0 + a.h - y);
        char s[48];
        snprintf(s, sizeof s, "%.0f", w);
        svg_text(b, a.x0 + bw * ((double)i + 0.5), y - 3, "middle", 10, s);
    }
    svg_close(b);
    char cap[512];
    snprintf(cap, sizeof cap,
             "%s. %zu trials (%.0f failed, %.0f by translation of a found set); most eviction "
             "tests in one trial: %.0f.",
             rp_str(m, "method"), n, rp_num(m, "failed"), rp_num(m, "translated"), tmax);
    caption(b, cap);
}

/* A numeric cell, or "-" when !ok. */
static void cell_num(gx_rbuf *b, int ok, const char *fmt, double v)
{
    char t[48];
    if (ok)
        snprintf(t, sizeof t, fmt, v);
    else
        snprintf(t, sizeof t, "-");
    rb_printf(b, "<td class=\"n\">%s</td>", t);
}

static void policy_table(gx_rbuf *b, const json_t *doc)
{
    section(b, "policy", "Policy agreement per candidate");
    const json_t *m = rp_path(doc, "data.policy");
    json_t *cs = json_object_get(m, "candidates");
    if (!json_array_size(cs)) {
        missing(b, "No policy candidates: run gpuxray discover --report DIR (the policy stage "
                   "records them).");
        return;
    }
    const char *chosen = rp_str(m, "chosen");
    rb_puts(b, "<table><tr><th>candidate</th><th>kind</th><th>agreement</th><th></th>"
               "<th>coverage</th><th>log-likelihood</th><th>hit-rate chi2</th></tr>\n");
    size_t i;
    json_t *c;
    json_array_foreach(cs, i, c)
    {
        double ag = rp_num(c, "agree");
        int rnd = json_is_true(json_object_get(c, "randomized"));
        rb_printf(b, "<tr%s><td><code>", !strcmp(chosen, rp_str(c, "spec")) ? " class=\"chosen\"" : "");
        rb_esc(b, rp_str(c, "spec"));
        rb_printf(b, "</code></td><td>%s</td>", rnd ? "randomized" : "deterministic");
        if (isfinite(ag) && !rnd)
            rb_printf(b, "<td class=\"n\">%.2f%%</td><td><svg width=\"120\" height=\"10\" style=\"margin:0\">"
                         "<rect width=\"%.1f\" height=\"10\" fill=\"%s\"/></svg></td>",
                      100 * ag, 120 * fmax(0, fmin(1, ag)), ag >= 0.99 ? "#2a9d3a" : "#1f5fbf");
        else
            rb_puts(b, "<td class=\"n\">-</td><td></td>");
        double cov = rp_num(c, "coverage"), ll = rp_num(c, "log_likelihood"), x2 = rp_num(c, "chi2");
        cell_num(b, !rnd && isfinite(cov), "%.1f%%", 100 * cov);
        cell_num(b, !rnd && isfinite(ll), "%.1f", ll);
        cell_num(b, rnd && isfinite(x2), "%.1f", x2);
        rb_puts(b, "</tr>\n");
    }
    rb_puts(b, "</table>\n");
    char cap[640];
    snprintf(cap, sizeof cap,
             "%s. %.0f runs, %.0f timed accesses. Chosen: %s (highlighted). Agreement: the share "
             "of state-independent predictions the measured hits and misses match.",
             rp_str(m, "method"), rp_num(m, "runs"), rp_num(m, "timed_accesses"),
             chosen[0] ? chosen : "none");
    caption(b, cap);
}

/* ---- optional sections: TLB, shared memory ------------------------------- */

/* Flatten a JSON value into rows "path = value" (objects and arrays of
 * scalars; deeper arrays of objects get an index). */
static void flat_rows(gx_rbuf *b, const char *path, const json_t *v, int depth)
{
    char key[160];
    if (json_is_object(v) && depth < 5) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x)
        {
            snprintf(key, sizeof key, "%s%s%s", path, path[0] ? "." : "", k);
            flat_rows(b, key, x, depth + 1);
        }
        return;
    }
    if (json_is_array(v) && depth < 5 && json_array_size(v) && !json_is_number(json_array_get(v, 0))) {
        size_t i;
        json_t *x;
        json_array_foreach((json_t *)v, i, x)
        {
            if (i >= 64)
                break;
            snprintf(key, sizeof key, "%s[%zu]", path, i);
            flat_rows(b, key, x, depth + 1);
        }
        return;
    }
    char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    rb_puts(b, "<tr><td><code>");
    rb_esc(b, path);
    rb_puts(b, "</code></td><td>");
    if (text && strlen(text) > 200)
        text[200] = 0;
    rb_esc(b, text ? text : "?");
    rb_puts(b, "</td></tr>\n");
    free(text);
}

/* A data series with "points" of numeric x / y members: the first of the
 * known x keys and y keys present. */
static void generic_plot(gx_rbuf *b, const json_t *series, const char *title)
{
    static const char *xs[] = {"footprint_bytes", "stride_bytes", "stride", "pages", "x"};
    static const char *ys[] = {"cycles", "mean_cycles", "latency_cycles", "y"};
    json_t *pts = json_object_get(series, "points");
    json_t *p0 = json_array_get(pts, 0);
    const char *kx = NULL, *ky = NULL;
    for (size_t i = 0; i < sizeof xs / sizeof xs[0] && !kx; i++)
        if (json_is_number(json_object_get(p0, xs[i])))
            kx = xs[i];
    for (size_t i = 0; i < sizeof ys / sizeof ys[0] && !ky; i++)
        if (json_is_number(json_object_get(p0, ys[i])))
            ky = ys[i];
    if (!kx || !ky)
        return;
    static double x[CURVE_MAX], y[CURVE_MAX];
    size_t n = get_xy(pts, kx, ky, x, y, CURVE_MAX);
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    range_of(x, n, &xlo, &xhi);
    range_of(y, n, &ylo, &yhi);
    int lg = xlo > 0 && xhi / xlo > 16;
    svg_axes a = {.x0 = 70, .y0 = 14, .w = PLOT_W - 90, .h = 240, .xmin = lg ? xlo / 1.3 : xlo,
                  .xmax = lg ? xhi * 1.3 : xhi, .ymin = 0, .ymax = yhi * 1.1, .xlog2 = lg};
    if (!(a.xmax > a.xmin))
        a.xmax = a.xmin + 1;
    svg_open(b, PLOT_W, 300, title);
    svg_frame(b, &a, kx, ky, strstr(kx, "bytes") != NULL);
    svg_line(b, &a, x, y, n, "#1f5fbf", 1.6, NULL, 1);
    svg_close(b);
    char cap[512];
    snprintf(cap, sizeof cap, "%s. %zu points.", rp_str(series, "method")[0] ? rp_str(series, "method") : "measured", n);
    caption(b, cap);
}

static void optional_section(gx_rbuf *b, const json_t *doc, const char *key, const char *id,
                             const char *title)
{
    const json_t *sec = rp_path(doc, "sections"), *data = json_object_get(doc, "data");
    json_t *prof = json_object_get(sec, key), *ser = json_object_get(data, key);
    if (!prof && !ser)
        return;
    section(b, id, title);
    if (ser)
        generic_plot(b, ser, title);
    if (prof) {
        rb_puts(b, "<table><tr><th>profile field</th><th>value</th></tr>\n");
        flat_rows(b, key, prof, 0);
        rb_puts(b, "</table>\n");
    }
}

/* ---- stage costs -------------------------------------------------------- */

static void stage_costs(gx_rbuf *b, const json_t *doc)
{
    section(b, "stages", "Cost of each stage");
    const json_t *m = rp_path(doc, "data.stages");
    json_t *st = json_object_get(m, "stages");
    if (!json_array_size(st)) {
        missing(b, "No stage costs: run gpuxray discover --report DIR.");
        return;
    }
    double amax = 1;
    size_t i;
    json_t *s;
    json_array_foreach(st, i, s) amax = fmax(amax, rp_num(s, "accesses"));
    rb_puts(b, "<table><tr><th>stage</th><th>status</th><th>calls</th><th>accesses</th>"
               "<th>serial</th><th>seconds</th><th>accesses (log scale)</th><th>note</th></tr>\n");
    json_array_foreach(st, i, s)
    {
        double acc = rp_num(s, "accesses");
        double f = acc >= 1 ? log10(acc + 1) / log10(amax + 1) : 0;
        rb_puts(b, "<tr><td>");
        rb_esc(b, rp_str(s, "stage"));
        rb_puts(b, "</td><td>");
        rb_esc(b, rp_str(s, "status"));
        rb_printf(b, "</td><td class=\"n\">%.0f</td><td class=\"n\">%.0f</td><td class=\"n\">%.0f"
                     "</td><td class=\"n\">%.2f</td><td><svg width=\"160\" height=\"10\" "
                     "style=\"margin:0\"><rect width=\"%.1f\" height=\"10\" fill=\"#1f5fbf\"/>"
                     "</svg></td><td>",
                  rp_num(s, "calls"), acc, rp_num(s, "serial_accesses"), rp_num(s, "seconds"),
                  160 * f);
        rb_esc(b, rp_str(s, "note"));
        rb_puts(b, "</td></tr>\n");
    }
    rb_puts(b, "</table>\n");
    caption(b, rp_str(m, "method"));
}

/* ---- the page ----------------------------------------------------------- */

int rp_render_html(const json_t *doc, gx_rbuf *b)
{
    const json_t *p = json_object_get(doc, "profile");
    rb_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
               "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
               "img-src data:; style-src 'unsafe-inline'\">\n"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>gpuxray report: ");
    rb_esc(b, rp_str(p, "name"));
    rb_printf(b, "</title>\n<style>%s</style></head><body>\n<h1>gpuxray report: ", STYLE);
    rb_esc(b, rp_str(p, "name"));
    rb_puts(b, "</h1>\n<p class=\"cap\">Profile kind <b>");
    rb_esc(b, rp_str(p, "kind"));
    rb_puts(b, "</b>, target <code>");
    rb_esc(b, rp_str(p, "target"));
    rb_puts(b, "</code>, device ");
    rb_esc(b, rp_str(p, "device"));
    rb_printf(b, " (%.0f SMs at %.0f MHz), created ", rp_num(p, "sm_count"),
              rp_num(p, "sm_clock_mhz"));
    rb_esc(b, rp_str(p, "created"));
    rb_puts(b, ". Latencies are in SM clock cycles.</p>\n<p class=\"cap\">"
               "<a href=\"#curve\">curve</a> &middot; <a href=\"#smslice\">(SM, slice) map</a> &middot; "
               "<a href=\"#page\">page classes</a> &middot; <a href=\"#ways\">ways</a> &middot; "
               "<a href=\"#policy\">policy</a> &middot; <a href=\"#numbers\">numbers</a> "
               "&middot; <a href=\"#stages\">stage costs</a></p>\n");
    curve_plot(b, doc);
    latency_map(b, doc);
    page_classes(b, doc);
    ways_plot(b, doc);
    policy_table(b, doc);
    optional_section(b, doc, "tlb", "tlb", "Translation (TLB steps)");
    optional_section(b, doc, "smem", "smem", "Shared memory: cost versus stride");
    numbers_table(b, doc);
    stage_costs(b, doc);
    rb_puts(b, "<p class=\"cap\">Written by gpuxray report. The raw measurements are in the "
               "data directory's JSON files (docs/report.md describes them).</p>\n</body></html>\n");
    return b->failed ? GX_ENOMEM : GX_OK;
}
