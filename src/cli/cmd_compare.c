/* cmd_compare.c - `gpuxray compare TRUTH FOUND [--json]`: one line per field
 * (field, truth, found, verdict, tolerance). Exit 0 when every compared
 * field matches, 1 on any mismatch or missing field, 2 on bad input. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "gpuxray/compare.h"
#include "gpuxray/profile.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuxray compare TRUTH.json FOUND.json [--json]\n"
               "  per-field verdict (match, mismatch, missing: a field of TRUTH absent in\n"
               "  FOUND); --json: the same as JSON on stdout\n"
               "exit: 0 every field matches; 1 any mismatch or missing field; 2 bad usage,\n"
               "an unreadable or invalid profile\n");
}

static void print_text(const gx_compare_result *r)
{
    printf("%-28s %-30s %-30s %-9s %s\n", "field", "truth", "found", "verdict", "tolerance");
    for (int i = 0; i < r->n_rows; i++) {
        const gx_compare_row *w = &r->rows[i];
        printf("%-28s %-30s %-30s %-9s %s\n", w->field, w->truth, w->found,
               gx_verdict_name(w->verdict), w->tolerance);
    }
    printf("%d fields: %d match, %d mismatch, %d missing\n", r->n_rows, r->n_match,
           r->n_mismatch, r->n_missing);
}

static void print_json(const gx_compare_result *r)
{
    json_t *rows = json_array();
    for (int i = 0; i < r->n_rows; i++) {
        const gx_compare_row *w = &r->rows[i];
        json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s}", "field", w->field, "truth", w->truth,
                              "found", w->found, "verdict", gx_verdict_name(w->verdict),
                              "tolerance", w->tolerance);
        if (!isnan(w->disagreement))
            json_object_set_new(o, "disagreement", json_real(w->disagreement));
        json_array_append_new(rows, o);
    }
    json_t *doc = json_pack("{s:o,s:i,s:i,s:i}", "fields", rows, "match", r->n_match,
                            "mismatch", r->n_mismatch, "missing", r->n_missing);
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s)
        printf("%s\n", s);
    free(s);
    json_decref(doc);
}

int gx_cmd_compare(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL};
    int n = 0, as_json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            as_json = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return GX_EXIT_OK;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            gx_cli_error("compare: unknown option '%s'", argv[i]);
            usage(stderr);
            return GX_EXIT_USAGE;
        } else if (n < 2) {
            paths[n++] = argv[i];
        } else {
            gx_cli_error("compare: too many arguments ('%s')", argv[i]);
            return GX_EXIT_USAGE;
        }
    }
    if (n != 2) {
        gx_cli_error("compare: TRUTH.json and FOUND.json are required");
        usage(stderr);
        return GX_EXIT_USAGE;
    }
    if (gx_cli_parse_only)
        return GX_EXIT_OK;
    gx_profile *p[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        gx_msg m;
        gx_msg_clear(&m);
        int rc = gx_profile_load(paths[i], &p[i], &m);
        if (rc != GX_OK) {
            gx_cli_error("%s", m.text);
            gx_profile_free(p[0]);
            return gx_exit_code(rc);
        }
    }
    gx_compare_result res;
    gx_msg m;
    gx_msg_clear(&m);
    int rc = gx_compare(p[0], p[1], NULL, &res, &m);
    gx_profile_free(p[0]);
    gx_profile_free(p[1]);
    if (rc != GX_OK) {
        gx_cli_error("compare: %s", m.text);
        return GX_EXIT_FAIL;
    }
    if (as_json)
        print_json(&res);
    else
        print_text(&res);
    return (res.n_mismatch || res.n_missing) ? GX_EXIT_FAIL : GX_EXIT_OK;
}
