/* text_word.h - internal: the text column decoder's word-at-a-time path
 * (text_word.c), called by gx_text_decode_cols (text.c) for its runs of
 * common lines `SM OP 0xHEX [SIZE]\n`. Any line the path does not take
 * goes back to text.c's byte-wise parsers, which give every message. */
#ifndef GPUXRAY_TEXT_WORD_H
#define GPUXRAY_TEXT_WORD_H

#include <stddef.h>
#include <stdint.h>

#include "reader_internal.h"

/* The column state the fast path keeps in locals: the batch's counts and
 * whether a line may fold into entry k - 1 (gx_cols_put's rule: the same
 * SM and size, key; entry k - 1 global and within one merge block at
 * mbase; the line's address in that block and within it: addr - mbase <
 * mlim; mlim = 0 folds nothing). */
typedef struct text_cols {
    size_t k;
    uint64_t ops[3], bytes;
    uint64_t key, mbase, mlim;
    size_t wide; /* gx_trace_cols.n_wide */
} text_cols;

/* The last common line's template: its prefix "SM OP 0x" when it fits in
 * one word (len <= 8 bytes; a line whose first len bytes are the same has
 * the same SM and op: the prefix ends at its "0x", the SM's digits end at
 * the blank within it), and its suffix, the bytes from the end of its
 * digits to its newline (" SIZE\n" or "\n": a line ending the same has the
 * same size). opc 0 (the start, or a prefix longer than a word): no
 * template, every line parses its own. */
typedef struct text_pre {
    uint64_t w, mask, len;    /* the prefix's first word, its bytes' mask, its length */
    uint64_t sw, smask, slen; /* the same for the suffix (at most 5 bytes) */
    uint32_t sm, size;
    unsigned opc; /* 1 + the op, 0: no template */
} text_pre;

/* What the word path writes into and how far it may read: lines starting
 * before word_end have 64 bytes readable from their start. */
typedef struct text_word_env {
    const char *word_end;
    gx_trace_cols *c;
    uint64_t sm_max; /* the largest SM a line may name */
    uint64_t mb, mmask; /* merging: the block's bytes (0: none), mb - 1 */
} text_word_env;

/* The common lines from p (while they start before e->word_end and the
 * columns have room) into the columns from entry s->k, each stored or
 * folded by gx_cols_put's rule; *line counts them. Returns the first line
 * not taken (p itself when none is). */
const char *gx_text_words(const text_word_env *e, text_cols *s, text_pre *pre, const char *p,
                          unsigned long long *line);

#endif
