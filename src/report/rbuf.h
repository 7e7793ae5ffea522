/* rbuf.h - internals of the report module (src/report): a growing text
 * buffer, a minimal PNG encoder for heat maps, and SVG plot helpers.
 *
 * Notes: a buffer that failed to grow stays failed (rb->failed) and
 * ignores further appends, so callers check once at the end. */
#ifndef GPUXRAY_REPORT_RBUF_H
#define GPUXRAY_REPORT_RBUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct gx_rbuf {
    char *s;
    size_t len, cap;
    int failed;
} gx_rbuf;

void rb_init(gx_rbuf *b);
void rb_free(gx_rbuf *b);
void rb_printf(gx_rbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rb_puts(gx_rbuf *b, const char *s);
void rb_put(gx_rbuf *b, const void *p, size_t n);
/* Text with & < > " ' escaped for HTML / SVG. */
void rb_esc(gx_rbuf *b, const char *s);
/* Base64 of data (RFC 4648, padded). */
void rb_base64(gx_rbuf *b, const uint8_t *data, size_t n);

/* A w x h RGB image (3 bytes a pixel, row-major) as a PNG file (8-bit
 * truecolor, deflate stored blocks: no compression, no zlib needed). */
int png_encode(const uint8_t *rgb, uint32_t w, uint32_t h, gx_rbuf *out);

/* Colours: a sequential map for v in [0, 1] (dark blue .. yellow) and a
 * categorical colour for class i (hues spread by the golden angle). */
void color_seq(double v, uint8_t rgb[3]);
void color_cat(uint32_t i, uint8_t rgb[3]);

/* ---- SVG plots ---- */
typedef struct svg_axes {
    double x0, y0, w, h;          /* plot area in SVG units */
    double xmin, xmax, ymin, ymax; /* data range */
    int xlog2;                    /* x on a log2 scale */
    int xint;                     /* x ticks at whole numbers only */
} svg_axes;

/* Open <svg> of width x height with a title (accessible name). */
void svg_open(gx_rbuf *b, int width, int height, const char *title);
void svg_close(gx_rbuf *b);
double svg_x(const svg_axes *a, double x);
double svg_y(const svg_axes *a, double y);
/* Frame, ticks and labels; x ticks as byte sizes when xbytes. */
void svg_frame(gx_rbuf *b, const svg_axes *a, const char *xlabel, const char *ylabel, int xbytes);
/* A polyline over n points (NaN points break the line), optional markers. */
void svg_line(gx_rbuf *b, const svg_axes *a, const double *x, const double *y, size_t n,
              const char *color, double width, const char *dash, int markers);
void svg_text(gx_rbuf *b, double x, double y, const char *anchor, int size, const char *text);
/* An RGB image placed at (x, y) scaled to w x h (pixelated). */
int svg_image(gx_rbuf *b, const uint8_t *rgb, uint32_t iw, uint32_t ih, double x, double y,
              double w, double h);
/* Legend entry: a short line of colour, then label, at (x, y). */
void svg_legend(gx_rbuf *b, double x, double y, const char *color, const char *dash,
                const char *label);
/* Nice tick step for a range. */
double svg_tick_step(double range, int want);
/* "32 KiB", "6 MiB", "1.5 GiB" */
void fmt_bytes(double v, char *buf, size_t len);

#endif
