/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json.c - JSON writing with escaping that keeps every byte visible.
 */
#include "json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void json_init(struct awfs_json *j)
{
	memset(j, 0, sizeof(*j));
	j->first[0] = true;
}

char *json_take(struct awfs_json *j, size_t *len)
{
	char *s = j->out.s ? j->out.s : util_xstrdup("");

	if (len)
		*len = j->out.len;
	j->out.s = NULL;
	json_init(j);
	return s;
}

static void put(struct awfs_json *j, const char *s, size_t n)
{
	util_str_put(&j->out, s, n);
}

/* Separate this value from the previous member or element. */
static void value_start(struct awfs_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->first[j->depth])
		put(j, ",", 1);
	j->first[j->depth] = false;
}

static void open_scope(struct awfs_json *j, char c)
{
	value_start(j);
	put(j, &c, 1);
	if (j->depth + 1 < AWFS_JSON_DEPTH)
		j->depth++;
	else
		abort();	/* a caller bug: our documents are shallow */
	j->first[j->depth] = true;
}

static void close_scope(struct awfs_json *j, char c)
{
	put(j, &c, 1);
	j->depth--;
}

void json_obj_begin(struct awfs_json *j) { open_scope(j, '{'); }
void json_obj_end(struct awfs_json *j) { close_scope(j, '}'); }
void json_arr_begin(struct awfs_json *j) { open_scope(j, '['); }
void json_arr_end(struct awfs_json *j) { close_scope(j, ']'); }

/* @name: a backslash doubled in the decoded text too (json.h) */
static void escape_into(struct awfs_json *j, const char *s, size_t len, bool name)
{
	const unsigned char *u = (const unsigned char *)s;
	char tmp[16];

	put(j, "\"", 1);
	for (size_t i = 0; i < len;) {
		unsigned cp;
		size_t ul;

		if (u[i] == '"') {
			put(j, "\\\"", 2);
			i++;
		} else if (u[i] == '\\') {
			/* a name's is doubled in the decoded text too: "\\x41" is never the byte 0x41 */
			put(j, "\\\\\\\\", name ? 4 : 2);
			i++;
		} else if (u[i] < 0x20 || u[i] == 0x7f) {
			int n = snprintf(tmp, sizeof(tmp), "\\u%04x", u[i]);

			put(j, tmp, (size_t)n);
			i++;
		} else if (u[i] < 0x80) {
			put(j, (const char *)u + i, 1);
			i++;
		} else if ((ul = util_utf8_len(u + i, len - i, &cp)) > 0) {
			if (util_cp_is_tricky(cp)) {
				/* U+2028 ends a line for JavaScript, U+202E turns text round */
				/* beyond the BMP (tag characters): a UTF-16 surrogate pair, as JSON has it */
				int n = cp > 0xffff ?
					snprintf(tmp, sizeof(tmp), "\\u%04x\\u%04x", 0xd800 + ((cp - 0x10000) >> 10),
						 0xdc00 + ((cp - 0x10000) & 0x3ff)) :
					snprintf(tmp, sizeof(tmp), "\\u%04x", cp);

				put(j, tmp, (size_t)n);
			} else {
				put(j, (const char *)u + i, ul);
			}
			i += ul;
		} else {
			/* an invalid byte: the visible text \xNN, its backslash escaped */
			int n = snprintf(tmp, sizeof(tmp), "\\\\x%02x", u[i]);

			put(j, tmp, (size_t)n);
			i++;
		}
	}
	put(j, "\"", 1);
}

void json_escape_into(struct awfs_json *j, const char *s, size_t len)
{
	escape_into(j, s, len, false);
}

static void key_into(struct awfs_json *j, const char *key, bool name)
{
	value_start(j);
	escape_into(j, key, strlen(key), name);
	put(j, ":", 1);
	j->after_key = true;
}

void json_key(struct awfs_json *j, const char *key)
{
	key_into(j, key, false);
}

void json_strn(struct awfs_json *j, const char *s, size_t len)
{
	value_start(j);
	json_escape_into(j, s, len);
}

void json_key_name(struct awfs_json *j, const char *key)
{
	key_into(j, key, true);
}

/* A string value, or null for NULL. */
static void str_into(struct awfs_json *j, const char *s, bool name)
{
	if (!s) {
		json_null(j);
		return;
	}
	value_start(j);
	escape_into(j, s, strlen(s), name);
}

void json_name(struct awfs_json *j, const char *s)
{
	str_into(j, s, true);
}

void json_str(struct awfs_json *j, const char *s)
{
	str_into(j, s, false);
}

void json_int(struct awfs_json *j, int64_t v)
{
	char tmp[32];

	int n = snprintf(tmp, sizeof(tmp), "%" PRId64, v);

	value_start(j);
	put(j, tmp, (size_t)n);
}

void json_uint(struct awfs_json *j, uint64_t v)
{
	char tmp[32];

	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v);

	value_start(j);
	put(j, tmp, (size_t)n);
}

void json_bool(struct awfs_json *j, bool v)
{
	value_start(j);
	put(j, v ? "true" : "false", v ? 4 : 5);
}

void json_null(struct awfs_json *j)
{
	value_start(j);
	put(j, "null", 4);
}
