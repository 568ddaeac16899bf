/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_log.c - log_escape() as a table of raw names and what the log shows,
 * truncation that never overflows, the sink's escaping of every line, and
 * the denial rate limiter driven by injected clock values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "log.h"
#include "util.h"

#define CANARY 0x5a

struct esc {
	const char *in;
	size_t len;
	const char *out;
};

/* sizeof keeps embedded NULs in the input length */
#define ESC(in, out) { in, sizeof(in) - 1, out }

static const struct esc escapes[] = {
	ESC("", ""),
	ESC("plain name-1.txt", "plain name-1.txt"),
	ESC("say \"hi\" \\ bye", "say \\\"hi\\\" \\\\ bye"),
	ESC("a\nb\tc\rd", "a\\nb\\tc\\rd"),
	ESC("\x01\x1b[31mred\x7f", "\\x01\\x1b[31mred\\x7f"),
	ESC("a\0b", "a\\x00b"),
	/* valid UTF-8 is kept */
	ESC("caf\xc3\xa9", "caf\xc3\xa9"),
	ESC("\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac"),
	ESC("\xf0\x9f\x98\x80!", "\xf0\x9f\x98\x80!"),
	ESC("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"),			/* U+10FFFF, the last */
	/* invalid UTF-8, byte by byte */
	ESC("\x80", "\\x80"),						/* lone continuation */
	ESC("\xe6\x97", "\\xe6\\x97"),					/* truncated at the end */
	ESC("\xe6\x97x", "\\xe6\\x97x"),				/* truncated before ASCII */
	ESC("\xc0\xaf", "\\xc0\\xaf"),					/* overlong '/' */
	ESC("\xe0\x80\xaf", "\\xe0\\x80\\xaf"),				/* overlong, 3 bytes */
	ESC("\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf"),		/* overlong, 4 bytes */
	ESC("\xed\xa0\x80", "\\xed\\xa0\\x80"),				/* surrogate U+D800 */
	ESC("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"),		/* U+110000 */
	ESC("\xf5\xff", "\\xf5\\xff"),
	/* C1 controls and text-direction tricks */
	ESC("\xc2\x85", "\\u0085"),
	ESC("\xc2\x9b" "2J", "\\u009b2J"),
	ESC("evil\xe2\x80\xaetxt.exe", "evil\\u202etxt.exe"),
	ESC("\xe2\x81\xa6", "\\u2066"),
	ESC("\xe2\x80\x8b", "\\u200b"),
	ESC("\xd8\x9c|\xc2\xad|\xe2\x81\xa0", "\\u061c|\\u00ad|\\u2060"),	/* ALM, soft hyphen, word joiner */
	ESC("\xf3\xa0\x81\x81", "\\U000e0041"),				/* a tag character */
	ESC("\xe2\x80\xa8", "\\u2028"),
	ESC("\xef\xbb\xbf", "\\ufeff"),
	ESC("\xc2\xa0", "\xc2\xa0"),					/* U+00A0 is printable */
};

static void test_escape_table(void **state)
{
	char out[256];

	(void)state;
	for (size_t i = 0; i < AWFS_ARRAY_LEN(escapes); i++) {
		assert_ptr_equal(log_escape(escapes[i].in, escapes[i].len, out, sizeof(out)), out);
		assert_string_equal(out, escapes[i].out);
	}
	/* only @len bytes are read */
	assert_string_equal(log_escape("abcdef", 3, out, sizeof(out)), "abc");
}

/* Escape into exactly @outsz bytes followed by a canary; return the text. */
static const char *escape_into(char *buf, const char *in, size_t len, size_t outsz)
{
	memset(buf, 0xa5, outsz);
	buf[outsz] = CANARY;
	log_escape(in, len, buf, outsz);
	assert_int_equal((unsigned char)buf[outsz], CANARY);
	return buf;
}

static void test_truncation(void **state)
{
	static const struct {
		const char *in;
		size_t outsz;
		const char *out;
	} rows[] = {
		{ "abcdefghij", 8, "abcd..." },
		{ "abcdefghij", 4, "..." },
		{ "abcdefghij", 3, "" },
		{ "abcdefghij", 1, "" },
		{ "abc", 4, "abc" },						/* exactly fits: no cut */
		{ "abcdefghij", 11, "abcdefghij" },
		{ "abcdefghij", 10, "abcdef..." },
		{ "\x01\x02\x03", 8, "\\x01..." },				/* escapes are never split */
		{ "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 8, "\xe6\x97\xa5..." },	/* nor characters */
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < AWFS_ARRAY_LEN(rows); i++)
		assert_string_equal(escape_into(buf, rows[i].in, strlen(rows[i].in), rows[i].outsz),
				    rows[i].out);
	/* a zero-sized buffer is not written at all */
	buf[0] = CANARY;
	log_escape("abc", 3, buf, 0);
	assert_int_equal((unsigned char)buf[0], CANARY);
}

/*
 * For every table row and every buffer size: no byte past the buffer is
 * written, the text is NUL-terminated inside it, and it is the whole
 * escape or a prefix of it ending in "...".
 */
static void test_truncation_never_overflows(void **state)
{
	char buf[300];

	(void)state;
	for (size_t i = 0; i < AWFS_ARRAY_LEN(escapes); i++) {
		size_t full = strlen(escapes[i].out);

		for (size_t outsz = 1; outsz <= full + 8; outsz++) {
			const char *got = escape_into(buf, escapes[i].in, escapes[i].len, outsz);
			size_t n = strnlen(got, outsz);

			assert_true(n < outsz);
			/* what fits is never cut */
			if (full < outsz)
				assert_string_equal(got, escapes[i].out);
			if (strcmp(got, escapes[i].out) == 0)
				continue;
			assert_true(n == 0 || (n >= 3 && strcmp(got + n - 3, "...") == 0 &&
					       strncmp(got, escapes[i].out, n - 3) == 0));
		}
	}
}

static void test_ratelimit_burst(void **state)
{
	struct awfs_ratelimit rl;
	uint64_t sup = 99;

	(void)state;
	ratelimit_init(&rl, 1.0, 3.0);
	for (int i = 0; i < 3; i++) {
		assert_true(ratelimit_take(&rl, 100.0, &sup));
		assert_int_equal(sup, 0);
	}
	assert_false(ratelimit_take(&rl, 100.0, &sup));
	assert_false(ratelimit_take(&rl, 100.5, &sup));
	assert_int_equal(rl.suppressed, 2);
	assert_int_equal(rl.total_suppressed, 2);
}

static void test_ratelimit_refill(void **state)
{
	struct awfs_ratelimit rl;
	uint64_t sup = 99;

	(void)state;
	ratelimit_init(&rl, 2.0, 2.0);
	assert_true(ratelimit_take(&rl, 10.0, &sup));
	assert_true(ratelimit_take(&rl, 10.0, &sup));
	for (int i = 0; i < 5; i++)
		assert_false(ratelimit_take(&rl, 10.0, &sup));
	/* half a second at 2/s is one token: the line reports the 5 it follows */
	assert_true(ratelimit_take(&rl, 10.5, &sup));
	assert_int_equal(sup, 5);
	assert_int_equal(rl.suppressed, 0);
	assert_false(ratelimit_take(&rl, 10.5, &sup));
	assert_false(ratelimit_take(&rl, 10.75, &sup));	/* half a token */
	assert_true(ratelimit_take(&rl, 11.0, &sup));	/* a whole one */
	assert_int_equal(sup, 2);
	assert_int_equal(rl.total_suppressed, 7);
	/* a long quiet spell refills to the burst, not beyond */
	assert_true(ratelimit_take(&rl, 1000.0, &sup));
	assert_int_equal(sup, 0);
	assert_true(ratelimit_take(&rl, 1000.0, &sup));
	assert_false(ratelimit_take(&rl, 1000.0, &sup));
	assert_int_equal(rl.total_suppressed, 8);
}

static void test_ratelimit_clock_backwards(void **state)
{
	struct awfs_ratelimit rl;
	uint64_t sup = 99;

	(void)state;
	ratelimit_init(&rl, 1.0, 1.0);
	assert_true(ratelimit_take(&rl, 100.0, &sup));
	assert_false(ratelimit_take(&rl, 50.0, &sup));		/* backwards: nothing gained */
	assert_false(ratelimit_take(&rl, 100.0, &sup));	/* and the jump back is not credited */
	assert_false(ratelimit_take(&rl, 100.5, &sup));
	assert_true(ratelimit_take(&rl, 101.0, &sup));
	assert_int_equal(sup, 3);
	assert_int_equal(rl.total_suppressed, 3);
}

/* A long path keeps its start and end around a visible mark; never a dangling escape. */
static void test_escape_path(void **state)
{
	char in[5000], out[AWFS_LOG_PATH_MAX + 1];
	size_t n;

	(void)state;
	/* short: as log_escape() */
	assert_string_equal(log_escape_path("/a/b\n", 5, out, sizeof(out)), "/a/b\\n");
	/* 4,000 bytes of \xff: 16,000 escaped, shortened */
	memset(in, 0xff, 4000);
	memcpy(in, "/start/", 7);
	memcpy(in + 4000 - 5, "/end!", 5);
	log_escape_path(in, 4000, out, sizeof(out));
	n = strlen(out);
	assert_true(n <= AWFS_LOG_PATH_MAX);
	assert_memory_equal(out, "/start/", 7);
	assert_string_equal(out + n - 5, "/end!");
	assert_non_null(strstr(out, "[...3808 bytes...]"));
	/* every backslash starts a whole escape */
	for (const char *p = out; (p = strchr(p, '\\')) != NULL; p += 4)
		assert_true(p[1] == 'x' && p[2] && p[3]);
	/* exactly the maximum escaped: kept whole */
	memset(in, 'a', AWFS_LOG_PATH_MAX);
	assert_int_equal(strlen(log_escape_path(in, AWFS_LOG_PATH_MAX, out, sizeof(out))),
			 AWFS_LOG_PATH_MAX);
}

/*
 * A path the agent named is one quoted field: nothing in it can close the
 * quotes, and the mark of a shortened one stands outside them.
 */
static void test_quote_path(void **state)
{
	char in[5000], out[AWFS_LOG_PATH_MAX + 8];
	const char *forged = "/t/x\") uid 0 gid 0 by nothing; EROFS: \"/y";
	const char *fake_mark = "/t/a\"[...5 bytes...]\"b";
	size_t n;

	(void)state;
	assert_string_equal(log_quote_path("/a/b\n", 5, out, sizeof(out)), "\"/a/b\\n\"");
	assert_string_equal(log_quote_path(forged, strlen(forged), out, sizeof(out)),
			    "\"/t/x\\\") uid 0 gid 0 by nothing; EROFS: \\\"/y\"");
	assert_string_equal(log_quote_path(fake_mark, strlen(fake_mark), out, sizeof(out)),
			    "\"/t/a\\\"[...5 bytes...]\\\"b\"");
	memset(in, 0xff, 4000);
	memcpy(in, "/start/", 7);
	memcpy(in + 4000 - 5, "/end!", 5);
	log_quote_path(in, 4000, out, sizeof(out));
	n = strlen(out);
	assert_true(n <= AWFS_LOG_PATH_MAX + 4);
	assert_memory_equal(out, "\"/start/", 8);
	assert_string_equal(out + n - 6, "/end!\"");
	assert_non_null(strstr(out, "\"[...3808 bytes...]\""));
	/* exactly the maximum escaped: kept whole, quoted */
	memset(in, 'a', AWFS_LOG_PATH_MAX);
	assert_int_equal(strlen(log_quote_path(in, AWFS_LOG_PATH_MAX, out, sizeof(out))),
			 AWFS_LOG_PATH_MAX + 2);
}

/* The byte budget: the burst, a refill by rate, the cap per mount. */
static void test_bytelimit(void **state)
{
	struct awfs_bytelimit bl;

	(void)state;
	bytelimit_init(&bl, 100.0, 1000.0, 5000);
	assert_true(bytelimit_allow(&bl, 0.0));
	bytelimit_charge(&bl, 1500);	/* over by one record: allowed, then none */
	assert_false(bytelimit_allow(&bl, 0.0));
	assert_false(bytelimit_allow(&bl, 4.9));	/* -500 + 490 */
	assert_true(bytelimit_allow(&bl, 5.1));
	bytelimit_charge(&bl, 10);
	/* refilled to the burst at most */
	assert_true(bytelimit_allow(&bl, 1000.0));
	bytelimit_charge(&bl, 999);
	assert_true(bytelimit_allow(&bl, 1000.0));
	bytelimit_charge(&bl, 2);
	assert_false(bytelimit_allow(&bl, 1000.0));
	/* the cap per mount: 1500 + 10 + 999 + 2 used; another 2,489 reach it */
	assert_true(bytelimit_allow(&bl, 2000.0));
	bytelimit_charge(&bl, 2489);
	assert_false(bytelimit_allow(&bl, 1e9));
}

/*
 * Log lines through a file sink: each call's line, without its timestamp
 * and "awfs: " (the caller frees the text, one line per call).
 */
static char *logged(void (*write_lines)(void))
{
	char dir[] = "/tmp/test_log.XXXXXX", path[64], why[256], *text, *body;
	FILE *f;
	long n;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/log", dir);
	assert_int_equal(log_open(path, why, sizeof(why)), 0);
	write_lines();
	log_close();
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	unlink(path);
	rmdir(dir);
	/* drop the timestamps: "2026-12-02T08:00:00Z awfs: " */
	body = calloc(1, (size_t)n + 1);
	assert_non_null(body);
	for (char *line = text, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
		char *msg = strstr(line, " awfs: ");

		assert_true(msg && msg < nl);
		strncat(body, msg + 7, (size_t)(nl + 1 - (msg + 7)));
	}
	free(text);
	return body;
}

static void raw_argument(void)
{
	log_msg(AWFS_LOG_WARN, "created %s here", "a\nb\x01" "c\xff" "\"d\\e\xe2\x80\xae" "f");
}

/* A raw name in a %s argument cannot break the line: the sink escapes it. */
static void test_sink_escapes(void **state)
{
	char *body;

	(void)state;
	body = logged(raw_argument);
	/* quotes and backslashes stay (log_escape_text()'s scheme); one line */
	assert_string_equal(body, "created a\\nb\\x01c\\xff\"d\\e\\u202ef here\n");
	free(body);
}

static void escaped_arguments(void)
{
	for (size_t i = 0; i < AWFS_ARRAY_LEN(escapes); i++)
		log_msg(AWFS_LOG_WARN, "[%s]", escapes[i].out);
}

/* What log_escape() wrote passes the sink unchanged: nothing is escaped twice. */
static void test_sink_fixed_point(void **state)
{
	struct util_str want = { 0 };
	char *body;

	(void)state;
	body = logged(escaped_arguments);
	for (size_t i = 0; i < AWFS_ARRAY_LEN(escapes); i++) {
		util_str_put(&want, "[", 1);
		util_str_put(&want, escapes[i].out, strlen(escapes[i].out));
		util_str_put(&want, "]\n", 2);
	}
	assert_string_equal(body, want.s);
	free(want.s);
	free(body);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_table),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_truncation_never_overflows),
		cmocka_unit_test(test_ratelimit_burst),
		cmocka_unit_test(test_ratelimit_refill),
		cmocka_unit_test(test_ratelimit_clock_backwards),
		cmocka_unit_test(test_escape_path),
		cmocka_unit_test(test_quote_path),
		cmocka_unit_test(test_bytelimit),
		cmocka_unit_test(test_sink_escapes),
		cmocka_unit_test(test_sink_fixed_point),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
