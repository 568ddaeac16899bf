/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json.h - a small JSON writer for audit records and awfsctl --json.
 *
 * Invariants: the output is always valid JSON whatever bytes a string holds:
 * each valid, printable UTF-8 character is itself, each byte that is not
 * part of valid UTF-8 the visible text \xNN, controls and the code points
 * that break or reorder text (U+0085, U+2028, U+2029, U+202E:
 * util_cp_is_tricky()) \u escapes, which decode to themselves. A name (a
 * path, a process name: what an agent chooses; json_name(),
 * json_key_name()) is encoded injectively, its bytes recoverable from the
 * decoded string alone: a backslash of the name is doubled there too, so
 * the name made of the four characters \xff decodes to \\xff and the byte
 * 0xff to \xff. Text (the policy's, awfs's own) keeps one backslash.
 * Keys come out in the order written, so callers keep a stable key order.
 */
#ifndef AWFS_JSON_H
#define AWFS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define AWFS_JSON_DEPTH 16

struct awfs_json {
	struct util_str out;
	int depth;
	bool first[AWFS_JSON_DEPTH];	/* no member written yet at this depth */
	bool after_key;
};

/* Start an empty document. */
void json_init(struct awfs_json *j);
/* Take the text (NUL-terminated); the writer is empty afterwards. */
char *json_take(struct awfs_json *j, size_t *len);

void json_obj_begin(struct awfs_json *j);
void json_obj_end(struct awfs_json *j);
void json_arr_begin(struct awfs_json *j);
void json_arr_end(struct awfs_json *j);
/* The key of the next member of the current object. */
void json_key(struct awfs_json *j, const char *key);
/* A string value from @len bytes (any bytes). */
void json_strn(struct awfs_json *j, const char *s, size_t len);
/* A string value from a C string; NULL writes null. */
void json_str(struct awfs_json *j, const char *s);
/* A name's string value, injectively (see the head); NULL writes null. */
void json_name(struct awfs_json *j, const char *s);
/* A key that is a name (a path component), injectively. */
void json_key_name(struct awfs_json *j, const char *key);
void json_int(struct awfs_json *j, int64_t v);
void json_uint(struct awfs_json *j, uint64_t v);
void json_bool(struct awfs_json *j, bool v);
void json_null(struct awfs_json *j);

/* Append the JSON string literal for @len bytes of @s to @out's text. */
void json_escape_into(struct awfs_json *out, const char *s, size_t len);

#endif
