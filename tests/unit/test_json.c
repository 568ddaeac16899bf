/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_json.c - JSON escaping keeps every byte visible and the output valid;
 * the writer puts commas and nesting right; the .awfs text module keeps the
 * last denials in order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "info.h"
#include "json.h"
#include "util.h"

static char *escaped(const char *s, size_t len)
{
	struct awfs_json j;

	json_init(&j);
	json_strn(&j, s, len);
	return json_take(&j, NULL);
}

#define ESC(in, out) { in, sizeof(in) - 1, out }

static void test_escape_table(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		const char *out;
	} rows[] = {
		ESC("plain", "\"plain\""),
		ESC("a\"b\\c", "\"a\\\"b\\\\c\""),
		ESC("line\nbreak\ttab\r", "\"line\\u000abreak\\u0009tab\\u000d\""),
		ESC("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\""),
		ESC("nul\0byte", "\"nul\\u0000byte\""),
		ESC("\xc3\xa9t\xc3\xa9", "\"\xc3\xa9t\xc3\xa9\""),			/* valid UTF-8 kept */
		ESC("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""),
		ESC("bad\xff", "\"bad\\\\xff\""),					/* visible, not dropped */
		ESC("\xc0\xaf", "\"\\\\xc0\\\\xaf\""),					/* overlong */
		ESC("\xed\xa0\x80", "\"\\\\xed\\\\xa0\\\\x80\""),			/* surrogate */
		ESC("\xe6\x97", "\"\\\\xe6\\\\x97\""),					/* truncated */
		ESC("\xc2\x85|\xe2\x80\xa8|\xe2\x80\xa9|\xe2\x80\xae", "\"\\u0085|\\u2028|\\u2029|\\u202e\""),
		ESC("", "\"\""),
	};

	(void)state;
	for (size_t i = 0; i < AWFS_ARRAY_LEN(rows); i++) {
		char *got = escaped(rows[i].in, rows[i].len);

		assert_string_equal(got, rows[i].out);
		free(got);
	}
}

/* A name's encoding is injective: the byte 0xff and the text \xff differ once decoded. */
static void test_names(void **state)
{
	struct awfs_json j;
	char *s;

	(void)state;
	json_init(&j);
	json_arr_begin(&j);
	json_name(&j, "y\xff");
	json_name(&j, "y\\xff");
	json_name(&j, "a\\b\"c");
	json_name(&j, "t\xf3\xa0\x81\x81g");	/* U+E0041, a tag character */
	json_str(&j, "r\\*");			/* text keeps one backslash */
	json_arr_end(&j);
	s = json_take(&j, NULL);
	assert_string_equal(s, "[\"y\\\\xff\",\"y\\\\\\\\xff\",\"a\\\\\\\\b\\\"c\",\"t\\udb40\\udc41g\",\"r\\\\*\"]");
	free(s);
	json_init(&j);
	json_obj_begin(&j);
	json_key_name(&j, "k\\");
	json_int(&j, 1);
	json_obj_end(&j);
	s = json_take(&j, NULL);
	assert_string_equal(s, "{\"k\\\\\\\\\":1}");
	free(s);
}

static void test_writer(void **state)
{
	struct awfs_json j;
	char *s;

	(void)state;
	json_init(&j);
	json_obj_begin(&j);
	json_key(&j, "a");
	json_int(&j, -3);
	json_key(&j, "b");
	json_arr_begin(&j);
	json_str(&j, "x");
	json_null(&j);
	json_bool(&j, true);
	json_obj_begin(&j);
	json_obj_end(&j);
	json_arr_end(&j);
	json_key(&j, "c");
	json_str(&j, NULL);
	json_key(&j, "d");
	json_uint(&j, UINT64_MAX);
	json_obj_end(&j);
	s = json_take(&j, NULL);
	assert_string_equal(s, "{\"a\":-3,\"b\":[\"x\",null,true,{}],\"c\":null,\"d\":18446744073709551615}");
	free(s);
}

static void test_denial_ring(void **state)
{
	struct awfs_policy p = { .file = "p.conf", .version = 1 };
	char line[64], *text, *first, *last;
	size_t len, lines = 0;

	(void)state;
	info_init(".awfs", &p, "/tmp/gh-aw");
	text = info_denials(&len);
	assert_int_equal(len, 0);
	free(text);
	for (int i = 0; i < AWFS_INFO_KEPT + 50; i++) {
		snprintf(line, sizeof(line), "denied %d", i);
		info_add_denial(line, 1000, true);
	}
	text = info_denials(&len);
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	assert_int_equal(lines, AWFS_INFO_KEPT);
	first = text;
	last = text + len - 1;
	while (last > text && last[-1] != '\n')
		last--;
	assert_memory_equal(first, "denied 50\n", 10);	/* the oldest kept */
	assert_string_equal(last, "denied 149\n");	/* the newest last */
	free(text);
	text = info_readme(&len);
	assert_non_null(strstr(text, "Nothing here is writable."));
	assert_non_null(strstr(text, "/tmp/gh-aw/.awfs/denials"));
	free(text);
	info_fini();
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_table),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_writer),
		cmocka_unit_test(test_denial_ring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
