/* fields.h - the profile's field table (rows in fields.def): one row per
 * JSON field with its C location, type, unit, range, default, flags, write
 * mode and compare rule. The reader, the writer, the validator's per-field
 * rules, compare and docs/profile-format.md all follow it.
 *
 * Notes:
 * - Rows belong to a group: the struct their offsets are relative to
 *   (GX_FG_ROOT = gx_profile; an array element or a nested struct is its own
 *   group). Paths are dot-separated and relative to the group's JSON object;
 *   a row's parent is the nearest object row whose path is its prefix, and
 *   rows are listed depth first (an object, then its members).
 * - Absent values: 0 for integers whose default is 0, NaN for doubles whose
 *   default is NaN, "" for strings, 0 for enums, -1 for booleans; a field
 *   whose default is a value (e.g. pte_bytes 8) is never absent.
 * - Integer ranges are inclusive; double ranges are inclusive unless
 *   GX_FF_LO_OPEN (then lo < v). Doubles must be finite.
 * - Internal to src/profile (and the tests); not part of the public API. */
#ifndef GX_PROFILE_FIELDS_H
#define GX_PROFILE_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "gpuxray/error.h"
#include "gpuxray/profile.h"

/* The struct each group's offsets are relative to. */
typedef gx_profile gx_fg_root;
typedef gx_level gx_fg_l2level;
typedef gx_tlb_level_cfg gx_fg_tlblevel;
typedef gx_va_region gx_fg_region;
typedef gx_small_cache_cfg gx_fg_smallcache;

typedef enum gx_fgroup {
    GX_FG_root = 0,
    GX_FG_l2level,
    GX_FG_tlblevel,
    GX_FG_region,
    GX_FG_smallcache,
    GX_FG_COUNT
} gx_fgroup;

typedef enum gx_ftype {
    GX_FT_OBJ,      /* a JSON object of the same group (members follow) */
    GX_FT_SUB,      /* a JSON object holding a nested struct of another group */
    GX_FT_ARR,      /* an array of objects of another group */
    GX_FT_U32,
    GX_FT_U64,      /* above 2^63-1 written (and accepted) as a decimal string */
    GX_FT_DBL,
    GX_FT_BOOL,     /* int: -1 absent, 0, 1 */
    GX_FT_STR,      /* char[size] */
    GX_FT_ENUM,     /* int-sized C enum; names[value], names[0] = absent */
    GX_FT_LIST_U64, /* an array of integers: uint64_t[], int count */
    GX_FT_LIST_U32, /* an array of integers: uint32_t[], int count */
    GX_FT_CUSTOM    /* read, written, checked and compared by a handler */
} gx_ftype;

/* Flags. */
#define GX_FF_REQ 0x01u     /* required for simulation (kinds reference, simulated) */
#define GX_FF_POW2 0x02u    /* integers: a power of two */
#define GX_FF_LO_OPEN 0x04u /* doubles: lo < v (else lo <= v) */
#define GX_FF_REAL 0x08u    /* doubles: always written as a real number */
#define GX_FF_POLICY 0x10u  /* strings: a policy spec of the registry (policy.h) */
#define GX_FF_ELEM 0x20u    /* array elements: required in every element */
#define GX_FF_NULLABLE 0x40u /* objects: JSON null = absent (presence flag 0) */
#define GX_FF_MODEL 0x80u   /* the model needs it, whatever the kind (gx_profile_check_model) */
#define GX_FF_NEED (GX_FF_REQ | GX_FF_MODEL)

/* How the writer emits a field (values over the kept document). */
typedef enum gx_fwrite {
    GX_W_NULL = 0, /* absent -> null */
    GX_W_KEEP,     /* absent -> null when the document has the key, else omitted */
    GX_W_VALUE,    /* always the value (a NaN double -> null) */
    GX_W_NONZERO,  /* the value when it is not the default, the key exists or it was given */
    /* objects */
    GX_W_OBJ,      /* always written (created when missing) */
    GX_W_OBJ_IF_ANY, /* written when a member is not absent or the key exists */
    GX_W_OBJ_NULL, /* presence flag 0 -> null */
    GX_W_OBJ_DELETE /* presence flag 0 -> key removed */
} gx_fwrite;

/* Compare rule (gpuxray compare), evaluated in cmp_order. */
typedef enum gx_fcmp {
    GX_CMP_NONE = 0,
    GX_CMP_EXACT,   /* integers, lists, enums, booleans: equal */
    GX_CMP_LATENCY, /* doubles: within latency_rel_tol relative */
    GX_CMP_POLICY,  /* equal spec, indistinguishable at the ways, or parameter within tol */
    GX_CMP_CUSTOM   /* the field's handler */
} gx_fcmp;

/* Custom handlers. */
typedef enum gx_fcustom {
    GX_FC_NONE = 0,
    GX_FC_HASH_SLICE,
    GX_FC_HASH_SET,
    GX_FC_CONFIDENCE,
    GX_FC_L2_LEVELS /* compare only: levels_from_one_sm as a whole */
} gx_fcustom;

#define GX_FNONE ((size_t)-1)

typedef struct gx_field {
    gx_fgroup group;
    const char *path;
    gx_ftype type;
    size_t off;       /* value (arrays: first element; SUB: the struct) */
    size_t size;      /* member size (STR: capacity; ARR / lists: element size) */
    size_t aux_off;   /* OBJ / SUB: int presence flag (SUB: inside the sub struct);
                         ARR / lists: int count; U64: int "given" flag; else GX_FNONE */
    int max_count;    /* ARR / lists */
    gx_fgroup sub;    /* ARR / SUB: element group */
    uint64_t ilo, ihi, idef; /* integer range and default */
    double dlo, dhi, ddef;   /* double range and default (NaN = absent) */
    unsigned flags;
    gx_fwrite wmode;
    gx_fcmp cmp;
    int cmp_order;
    const char *const *names; /* ENUM */
    gx_fcustom custom;
    const char *unit; /* "" when none */
    const char *doc;
} gx_field;

/* The whole table, in fields.def order. */
const gx_field *gx_fields(size_t *n);
/* The row of a group's path, NULL when none. */
const gx_field *gx_field_find(gx_fgroup g, const char *path);
/* The struct size of a group. */
size_t gx_fgroup_size(gx_fgroup g);
/* Where a group's rows sit, for the docs: "" (root), "tlb.levels[]", ...
 * (tlb.walker.pwc stands for neighbour_pwc too). */
const char *gx_fgroup_name(gx_fgroup g);
/* The documented name of a row: "l2.ways", "tlb.levels[].entries". */
void gx_field_doc_name(const gx_field *f, char *buf, size_t cap);
/* Members of a JSON object row: is row r a direct member of the object at
 * prefix ("" = the group's top)? */
int gx_field_is_child(const gx_field *r, gx_fgroup g, const char *prefix);
/* The last path component. */
const char *gx_field_key(const gx_field *r);

/* Set every field of a group to its default (strings "", enums 0, nested
 * structs and array elements too; counts and presence flags 0). */
void gx_fields_init(gx_fgroup g, void *base);

/* Value access. */
static inline void *gx_fptr(const void *base, size_t off)
{
    return (char *)(uintptr_t)base + off;
}
/* Is the field absent (see the notes)? Objects: presence flag 0. */
int gx_field_absent(const gx_field *f, const void *base);

/* The per-field rule of the table: range, power of two, finiteness, enum
 * and boolean values, policy spec, list and array lengths. name is the
 * field's full name for the message ("l2.ways", "tlb.levels[1].ways").
 * Absent values pass (requirement is the validator's). */
int gx_field_check(const gx_field *f, const void *base, const char *name, gx_msg *msg);
/* Integer rule alone, for a value about to be stored (reader) or a list
 * element. */
int gx_field_check_int(const gx_field *f, uint64_t v, const char *name, gx_msg *msg);
int gx_field_check_dbl(const gx_field *f, double v, const char *name, gx_msg *msg);

/* An enum value's name, "" when absent or out of range; the names as text
 * ("uniform, near-far"). */
const char *gx_field_enum_name(const gx_field *f, int v);
void gx_field_names_text(const gx_field *f, char *buf, size_t cap);
/* An enum value by name; -1 when none. */
int gx_field_enum_value(const gx_field *f, const char *name);

/* The documented range of a field as text ("1..64", "a power of two in
 * 32..256", "> 0 and <= 1e+07"), for messages and the docs. */
void gx_field_range_text(const gx_field *f, char *buf, size_t cap);

#endif
