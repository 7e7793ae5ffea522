/* svg.c - the report's plot primitives: axes with ticks, polylines,
 * legends, text, images (heat maps as embedded PNG) and colour maps.
 *
 * Notes: everything is static SVG (no script), so the page reads with
 * JavaScript off; an image is a data: URI (no network request). Coordinates
 * are printed with one decimal to keep the file small. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbuf.h"

void fmt_bytes(double v, char *buf, size_t len)
{
    static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    while (fabs(v) >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    if (fabs(v - round(v)) < 1e-9)
        snprintf(buf, len, "%.0f %s", v, u[i]);
    else
        snprintf(buf, len, "%.3g %s", v, u[i]);
}

void color_seq(double v, uint8_t rgb[3])
{
    /* a viridis-like ramp through 5 anchors */
    static const double a[5][3] = {
        {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
    if (!isfinite(v)) {
        rgb[0] = rgb[1] = rgb[2] = 200;
        return;
    }
    v = v < 0 ? 0 : v > 1 ? 1 : v;
    double t = v * 4;
    int i = (int)t;
    if (i > 3)
        i = 3;
    double f = t - i;
    for (int c = 0; c < 3; c++)
        rgb[c] = (uint8_t)lround(a[i][c] + f * (a[i + 1][c] - a[i][c]));
}

void color_cat(uint32_t i, uint8_t rgb[3])
{
    double h = fmod(i * 137.508, 360.0) / 60.0, s = 0.65, l = (i / 7) % 2 ? 0.42 : 0.58;
    double c = (1 - fabs(2 * l - 1)) * s, x = c * (1 - fabs(fmod(h, 2.0) - 1)), m = l - c / 2;
    double r = 0, g = 0, b = 0;
    int k = (int)h;
    switch (k) {
    case 0: r = c; g = x; break;
    case 1: r = x; g = c; break;
    case 2: g = c; b = x; break;
    case 3: g = x; b = c; break;
    case 4: r = x; b = c; break;
    default: r = c; b = x; break;
    }
    rgb[0] = (uint8_t)lround(255 * (r + m));
    rgb[1] = (uint8_t)lround(255 * (g + m));
    rgb[2] = (uint8_t)lround(255 * (b + m));
}

void svg_open(gx_rbuf *b, int width, int height, const char *title)
{
    rb_printf(b,
              "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" width=\"%d\" "
              "height=\"%d\" role=\"img\" font-family=\"sans-serif\" font-size=\"11\"><title>",
              width, height, width, height);
    rb_esc(b, title);
    rb_puts(b, "</title>\n");
}

void svg_close(gx_rbuf *b)
{
    rb_puts(b, "</svg>\n");
}

double svg_x(const svg_axes *a, double x)
{
    double lo = a->xmin, hi = a->xmax;
    if (a->xlog2) {
        x = log2(x > 0 ? x : 1e-300);
        lo = log2(lo);
        hi = log2(hi);
    }
    return a->x0 + (hi > lo ? (x - lo) / (hi - lo) : 0.5) * a->w;
}

double svg_y(const svg_axes *a, double y)
{
    double f = a->ymax > a->ymin ? (y - a->ymin) / (a->ymax - a->ymin) : 0.5;
    return a->y0 + a->h - f * a->h;
}

double svg_tick_step(double range, int want)
{
    if (!(range > 0) || want < 1)
        return 1;
    double raw = range / want, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

void svg_text(gx_rbuf *b, double x, double y, const char *anchor, int size, const char *text)
{
    rb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\">", x, y,
              anchor, size);
    rb_esc(b, text);
    rb_puts(b, "</text>\n");
}

void svg_frame(gx_rbuf *b, const svg_axes *a, const char *xlabel, const char *ylabel, int xbytes)
{
    rb_printf(b,
              "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fff\" "
              "stroke=\"#888\"/>\n",
              a->x0, a->y0, a->w, a->h);
    char t[48];
    if (a->xlog2) {
        int lo = (int)ceil(log2(a->xmin) - 1e-9), hi = (int)floor(log2(a->xmax) + 1e-9);
        int step = hi - lo > 12 ? 2 : 1;
        for (int e = lo; e <= hi; e += step) {
            double v = ldexp(1.0, e), x = svg_x(a, v);
            rb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n",
                      x, a->y0, x, a->y0 + a->h);
            if (xbytes)
                fmt_bytes(v, t, sizeof t);
            else
                snprintf(t, sizeof t, "%g", v);
            svg_text(b, x, a->y0 + a->h + 14, "middle", 10, t);
        }
    } else {
        double st = svg_tick_step(a->xmax - a->xmin, 8);
        if (a->xint && st < 1)
            st = 1;
        for (double v = ceil(a->xmin / st) * st; v <= a->xmax + 1e-9 * st; v += st) {
            double x = svg_x(a, v);
            rb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n",
                      x, a->y0, x, a->y0 + a->h);
            if (xbytes)
                fmt_bytes(v, t, sizeof t);
            else
                snprintf(t, sizeof t, "%g", v);
            svg_text(b, x, a->y0 + a->h + 14, "middle", 10, t);
        }
    }
    double st = svg_tick_step(a->ymax - a->ymin, 6);
    for (double v = ceil(a->ymin / st) * st; v <= a->ymax + 1e-9 * st; v += st) {
        double y = svg_y(a, v);
        rb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n",
                  a->x0, y, a->x0 + a->w, y);
        snprintf(t, sizeof t, "%g", v);
        svg_text(b, a->x0 - 4, y + 3, "end", 10, t);
    }
    if (xlabel)
        svg_text(b, a->x0 + a->w / 2, a->y0 + a->h + 30, "middle", 11, xlabel);
    if (ylabel) {
        rb_printf(b, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\">",
                  a->x0 - 38, a->y0 + a->h / 2);
        rb_esc(b, ylabel);
        rb_puts(b, "</text>\n");
    }
}

void svg_line(gx_rbuf *b, const svg_axes *a, const double *x, const double *y, size_t n,
              const char *color, double width, const char *dash, int markers)
{
    int open = 0;
    for (size_t i = 0; i < n; i++) {
        int ok = isfinite(x[i]) && isfinite(y[i]) && (!a->xlog2 || x[i] > 0);
        if (!ok) {
            if (open)
                rb_puts(b, "\"/>\n");
            open = 0;
            continue;
        }
        if (!open) {
            rb_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s%s%s points=\"",
                      color, width, dash ? " stroke-dasharray=\"" : "", dash ? dash : "",
                      dash ? "\"" : "");
            open = 1;
        }
        rb_printf(b, "%.1f,%.1f ", svg_x(a, x[i]), svg_y(a, y[i]));
    }
    if (open)
        rb_puts(b, "\"/>\n");
    if (markers)
        for (size_t i = 0; i < n; i++)
            if (isfinite(x[i]) && isfinite(y[i]) && (!a->xlog2 || x[i] > 0))
                rb_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n",
                          svg_x(a, x[i]), svg_y(a, y[i]), color);
}

int svg_image(gx_rbuf *b, const uint8_t *rgb, uint32_t iw, uint32_t ih, double x, double y,
              double w, double h)
{
    gx_rbuf png;
    rb_init(&png);
    if (png_encode(rgb, iw, ih, &png) != 0) {
        rb_free(&png);
        return -1;
    }
    rb_printf(b,
              "<image x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
              "preserveAspectRatio=\"none\" style=\"image-rendering:pixelated\" href=\"data:image/png;base64,",
              x, y, w, h);
    rb_base64(b, (const uint8_t *)png.s, png.len);
    rb_puts(b, "\"/>\n");
    rb_free(&png);
    return 0;
}

void svg_legend(gx_rbuf *b, double x, double y, const char *color, const char *dash,
                const char *label)
{
    rb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                 "stroke-width=\"2\"%s%s%s/>\n",
              x, y - 4, x + 18, y - 4, color, dash ? " stroke-dasharray=\"" : "",
              dash ? dash : "", dash ? "\"" : "");
    svg_text(b, x + 22, y, "start", 11, label);
}
