/* data.c - the raw measurement files of a discovery run: one JSON file per
 * series (curve, sm_slice, slice_classes, ways, policy, stages, rows, and
 * any series other stages add), saved from gx_report.data and loaded back
 * for `gpuxray report --data DIR`.
 *
 * Notes: a file is a series when its top-level "format" is gpuxray-data;
 * anything else in the directory (the report itself, the profile) is
 * skipped. Series names are restricted to [a-z0-9_] so a name can never
 * leave the directory. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuxray/outfile.h"
#include "gpuxray/report.h"

#define DATA_MAX_FILE_BYTES (64u << 20) /* a series file larger than this is not ours */

static int good_name(const char *s)
{
    if (!s || !*s || strlen(s) > 64)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

static int ensure_dir(const char *dir, gx_msg *msg)
{
    struct stat st;
    if (stat(dir, &st) == 0)
        return S_ISDIR(st.st_mode) ? GX_OK
                                   : gx_fail(msg, GX_EIO, "%s: exists and is not a directory", dir);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return gx_fail(msg, GX_EIO, "%s: cannot create directory: %s", dir, strerror(errno));
    return GX_OK;
}

static int save_series(const char *dir, const char *name, json_t *body, gx_msg *msg)
{
    if (!good_name(name))
        return gx_fail(msg, GX_EINVAL, "data series name '%s' (need [a-z0-9_])", name);
    json_t *o = json_pack("{s:s,s:i,s:s}", "format", GX_DATA_FORMAT, "version", GX_DATA_VERSION,
                          "series", name);
    if (!o)
        return gx_fail(msg, GX_ENOMEM, "out of memory");
    if (json_is_object(body))
        json_object_update_missing(o, body);
    char *text = json_dumps(o, JSON_INDENT(1)); /* full precision: round trips */
    json_decref(o);
    if (!text)
        return gx_fail(msg, GX_ENOMEM, "out of memory serialising series %s", name);
    size_t n = strlen(dir) + strlen(name) + 8;
    char *path = malloc(n);
    int rc = GX_ENOMEM;
    if (path) {
        snprintf(path, n, "%s/%s.json", dir, name);
        size_t len = strlen(text);
        text[len] = '\n'; /* replaces the terminator: length passed explicitly */
        rc = gx_out_write_file(path, text, len + 1, msg);
        free(path);
    } else {
        gx_fail(msg, rc, "out of memory");
    }
    free(text);
    return rc;
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *stages_json(const gx_report *r)
{
    json_t *a = json_array();
    for (int i = 0; a && i < r->n_stages; i++) {
        const gx_stage_cost *s = &r->stages[i];
        json_array_append_new(
            a, json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:o}", "stage", s->stage, "status",
                         s->status == GX_OK ? "ok" : gx_errname(s->status), "note", s->note,
                         "calls", (json_int_t)s->calls, "accesses", (json_int_t)s->accesses,
                         "serial_accesses", (json_int_t)s->serial_accesses, "seconds",
                         num(s->seconds)));
    }
    return json_pack("{s:s,s:o*}", "method",
                     "the target's counters before and after each stage: primitive calls, "
                     "accesses, accesses made one after another, seconds inside primitives",
                     "stages", a);
}

static json_t *rows_json(const gx_report *r)
{
    json_t *a = json_array();
    for (int i = 0; a && i < r->n_rows; i++) {
        const gx_report_row *w = &r->rows[i];
        json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:o,s:b,s:b}", "parameter",
                                           w->parameter, "value", w->value, "method", w->method,
                                           "confidence", num(w->confidence), "in_profile",
                                           w->in_profile, "superseded", w->superseded));
    }
    return json_pack("{s:o*}", "rows", a);
}

int gx_report_data_save(const gx_report *r, const char *dir, gx_msg *msg)
{
    if (!r || !dir)
        return gx_fail(msg, GX_EINVAL, "gx_report_data_save: NULL argument");
    int rc = ensure_dir(dir, msg);
    if (rc != GX_OK)
        return rc;
    json_t *data = r->data;
    const char *key;
    json_t *val;
    json_object_foreach(data, key, val)
    {
        if ((rc = save_series(dir, key, val, msg)) != GX_OK)
            return rc;
    }
    json_t *st = stages_json(r), *rows = rows_json(r);
    if (!st || !rows) {
        json_decref(st);
        json_decref(rows);
        return gx_fail(msg, GX_ENOMEM, "out of memory");
    }
    rc = save_series(dir, "stages", st, msg);
    if (rc == GX_OK)
        rc = save_series(dir, "rows", rows, msg);
    json_decref(st);
    json_decref(rows);
    return rc;
}

void gx_report_data_release(void *data)
{
    json_decref((json_t *)data);
}

/* One file: a series object or NULL (not ours, unreadable). */
static json_t *load_one(const char *path, const char **series)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > DATA_MAX_FILE_BYTES)
        return NULL;
    json_error_t err;
    json_t *o = json_load_file(path, 0, &err);
    if (!json_is_object(o) ||
        strcmp(json_string_value(json_object_get(o, "format")) ? json_string_value(json_object_get(o, "format")) : "",
               GX_DATA_FORMAT) != 0 ||
        !good_name(json_string_value(json_object_get(o, "series")))) {
        json_decref(o);
        return NULL;
    }
    *series = json_string_value(json_object_get(o, "series"));
    return o;
}

int gx_report_data_load(const char *dir, void **data, gx_msg *msg)
{
    if (!dir || !data)
        return gx_fail(msg, GX_EINVAL, "gx_report_data_load: NULL argument");
    *data = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return gx_fail(msg, GX_EIO, "%s: cannot open the data directory: %s", dir,
                       strerror(errno));
    json_t *all = json_object();
    if (!all) {
        closedir(d);
        return gx_fail(msg, GX_ENOMEM, "out of memory");
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
            continue;
        size_t pn = strlen(dir) + n + 2;
        char *path = malloc(pn);
        if (!path)
            break;
        snprintf(path, pn, "%s/%s", dir, e->d_name);
        const char *series = NULL;
        json_t *o = load_one(path, &series);
        free(path);
        if (o) {
            json_object_set(all, series, o);
            json_decref(o);
        }
    }
    closedir(d);
    if (json_object_size(all) == 0) {
        json_decref(all);
        return gx_fail(msg, GX_EINVAL,
                       "%s: no gpuxray-data files (write them with gpuxray discover --data DIR)",
                       dir);
    }
    *data = all;
    return GX_OK;
}
