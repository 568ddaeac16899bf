/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_review.c - the change record's arithmetic without a mount: SHA-256
 * against FIPS 180-4's vectors, and awfsctl changes (review.h) over
 * sequences of records whose net effect is known: temporaries renamed over
 * files, directories moved with their contents, exchanges, removals under
 * moved and removed directories, files made and removed again, changes of
 * times alone, and records that are incomplete.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "review.h"
#include "sha256.h"

static void test_sha256_vectors(void **state)
{
	static const struct {
		const char *in;
		const char *hex;
	} v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	};
	static char a[1000];
	struct sha256 s;
	char hex[65];

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++) {
		sha256_init(&s);
		sha256_update(&s, v[i].in, strlen(v[i].in));
		sha256_hex(&s, hex);
		assert_string_equal(hex, v[i].hex);
	}
	/* a million 'a', fed in uneven pieces across block edges */
	memset(a, 'a', sizeof(a));
	sha256_init(&s);
	for (size_t done = 0, step = 1; done < 1000000; done += step, step = step % 997 + 1)
		sha256_update(&s, a, done + step > 1000000 ? 1000000 - done : step);
	sha256_hex(&s, hex);
	assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

#define MNT "{\"time\":\"2026-12-03T10:00:00.000Z\",\"event\":\"mount\",\"mountpoint\":\"/m\",\"policy\":{\"rules\":[{\"a\":1}]}}\n"
#define C(t, rest) "{\"time\":\"2026-12-03T10:00:" t "Z\",\"event\":\"change\"," rest ",\"uid\":1000,\"pid\":1,\"comm\":\"x\"}\n"
#define END "{\"time\":\"2026-12-03T11:00:00.000Z\",\"event\":\"changes\",\"records\":9,\"dropped\":0,\"complete\":true}\n"
#define H1 "1111111111111111111111111111111111111111111111111111111111111111"
#define H2 "2222222222222222222222222222222222222222222222222222222222222222"

/* awfsctl changes over @text; its output in @out (static), its status returned. */
static int review(const char *text, const char *since, char *out, size_t size)
{
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	FILE *o = fmemopen(out, size, "w");
	int ret;

	assert_non_null(in);
	assert_non_null(o);
	memset(out, 0, size);
	ret = review_changes(in, "test", since, false, o, stderr);
	fclose(in);
	fclose(o);
	return ret;
}

/* The change lines of @out (its first line, the totals, left out), joined with '|'. */
static const char *lines(const char *out)
{
	static char buf[8192];
	const char *p = strchr(out, '\n');

	buf[0] = '\0';
	for (p = p ? p + 1 : out; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n > 2 && p[0] == ' ' && p[1] == ' ') {
			if (buf[0])
				strcat(buf, "|");
			strncat(buf, p + 2, n - 2);
		}
		p += n + (e ? 1 : 0);
	}
	/* squeeze the padding after the word */
	for (char *s = buf; (s = strstr(s, "  ")) != NULL;)
		memmove(s, s + 1, strlen(s));
	return buf;
}

static void test_net_changes(void **state)
{
	static char out[16384];
	static const char rec[] = MNT
		/* a temporary written, renamed over an existing file: that file modified */
		C("01.000", "\"op\":\"create\",\"path\":\"/m/mem/.f.tmp\",\"kind\":\"file\"")
		C("01.100", "\"op\":\"write\",\"path\":\"/m/mem/.f.tmp\",\"closes\":1,\"size\":3,\"sha256\":\"" H1 "\"")
		C("01.200", "\"op\":\"rename\",\"path\":\"/m/mem/.f.tmp\",\"to\":\"/m/mem/f\",\"replaced\":true")
		/* a directory moved, then a file in it changed: renamed, and the file renamed and modified */
		C("02.000", "\"op\":\"rename\",\"path\":\"/m/mem/d\",\"to\":\"/m/mem/e\",\"replaced\":false")
		C("02.100", "\"op\":\"write\",\"path\":\"/m/mem/e/x\",\"closes\":2,\"size\":5,\"sha256\":\"" H2 "\"")
		C("02.200", "\"op\":\"unlink\",\"path\":\"/m/mem/e/y\"")
		/* made and removed again: nothing */
		C("03.000", "\"op\":\"mkdir\",\"path\":\"/m/agent/t\",\"kind\":\"dir\"")
		C("03.100", "\"op\":\"create\",\"path\":\"/m/agent/t/z\",\"kind\":\"file\"")
		C("03.200", "\"op\":\"unlink\",\"path\":\"/m/agent/t/z\"")
		C("03.300", "\"op\":\"rmdir\",\"path\":\"/m/agent/t\"")
		/* a tree removed whole: only its top is named */
		C("04.000", "\"op\":\"unlink\",\"path\":\"/m/agent/old/a\"")
		C("04.100", "\"op\":\"rmdir\",\"path\":\"/m/agent/old/sub\"")
		C("04.200", "\"op\":\"rmdir\",\"path\":\"/m/agent/old\"")
		/* times alone: nothing; a mode: modified */
		C("05.000", "\"op\":\"setattr\",\"path\":\"/m/agent/keep\",\"times\":true")
		C("05.100", "\"op\":\"setattr\",\"path\":\"/m/agent/mode\",\"mode\":\"0600\"")
		/* an exchange of two existing files: both renamed */
		C("06.000", "\"op\":\"exchange\",\"path\":\"/m/logs/p\",\"to\":\"/m/logs/q\",\"replaced\":true")
		/* a name with a newline in it stays on one line */
		C("07.000", "\"op\":\"mkdir\",\"path\":\"/m/logs/a\\u000ab\",\"kind\":\"dir\"")
		/* a symlink made, a file renamed away and another made in its place */
		C("08.000", "\"op\":\"symlink\",\"path\":\"/m/tmp/l\",\"kind\":\"symlink\",\"target\":\"/etc\"")
		C("08.100", "\"op\":\"rename\",\"path\":\"/m/tmp/r\",\"to\":\"/m/tmp/r2\",\"replaced\":false")
		C("08.200", "\"op\":\"create\",\"path\":\"/m/tmp/r\",\"kind\":\"file\"")
		END;

	(void)state;
	assert_int_equal(review(rec, NULL, out, sizeof(out)), 0);
	/* sorted by path: where it is now, or was (removed) */
	assert_string_equal(lines(out),
			    "modified agent/mode (mode, owner or xattrs changed)|"
			    "removed agent/old|"
			    "created logs/a\\x0ab (dir)|"
			    "renamed logs/q -> logs/p (replaced)|"
			    "renamed logs/p -> logs/q (replaced)|"
			    "removed mem/d/y|"
			    "renamed mem/d -> mem/e (unchanged)|"
			    "renamed mem/d/x -> mem/e/x (5 bytes, sha256 " H2 ")|"
			    "modified mem/f (replaced, 3 bytes, sha256 " H1 ")|"
			    "created tmp/l (symlink, to /etc)|"
			    "modified tmp/r (replaced)|"
			    "renamed tmp/r -> tmp/r2 (unchanged)");
	assert_non_null(strstr(out, "2 created, 3 modified, 5 renamed, 2 removed") ? out : NULL);
	/* --since: only the last two records */
	assert_int_equal(review(rec, "2026-12-03T10:00:08.1", out, sizeof(out)), 0);
	assert_string_equal(lines(out), "modified tmp/r (replaced)|renamed tmp/r -> tmp/r2 (unchanged)");
}

/* One file, two names: a write through a name removed since reaches the name that is left. */
static void test_hard_links(void **state)
{
	static char out[4096];
	static const char rec[] = MNT
		C("01.000", "\"op\":\"create\",\"path\":\"/m/w/a\",\"kind\":\"file\",\"object\":\"1:5\"")
		C("01.100", "\"op\":\"link\",\"path\":\"/m/w/a\",\"to\":\"/m/w/b\",\"kind\":\"file\",\"object\":\"1:5\"")
		C("01.200", "\"op\":\"unlink\",\"path\":\"/m/w/a\"")
		C("01.300", "\"op\":\"write\",\"path\":\"/m/w/a (deleted)\",\"object\":\"1:5\",\"closes\":1,\"size\":3,\"sha256\":\"" H1 "\"")
		/* a host file linked in, written through its first name */
		C("02.000", "\"op\":\"link\",\"path\":\"/m/w/old\",\"to\":\"/m/w/alias\",\"kind\":\"file\",\"object\":\"1:9\"")
		C("02.100", "\"op\":\"write\",\"path\":\"/m/w/old\",\"object\":\"1:9\",\"closes\":1,\"size\":5,\"sha256\":\"" H2 "\"")
		/* a number reused by a new file is a new object */
		C("03.000", "\"op\":\"unlink\",\"path\":\"/m/w/b\"")
		C("03.100", "\"op\":\"create\",\"path\":\"/m/w/c\",\"kind\":\"file\",\"object\":\"1:5\"")
		END;

	(void)state;
	assert_int_equal(review(rec, "2026-12-03T10:00:03", out, sizeof(out)), 0);
	assert_string_equal(lines(out), "removed w/b|created w/c (file)");
	assert_int_equal(review(rec, NULL, out, sizeof(out)), 0);
	assert_string_equal(lines(out), "created w/alias (file, 5 bytes, sha256 " H2 ")|"
					 "created w/c (file)|"
					 "modified w/old (5 bytes, sha256 " H2 ")");
}

static void test_incomplete(void **state)
{
	static char out[4096];
	static const char open[] = MNT C("01.000", "\"op\":\"mkdir\",\"path\":\"/m/a\",\"kind\":\"dir\"");
	static const char dropped[] = MNT C("01.000", "\"op\":\"mkdir\",\"path\":\"/m/a\",\"kind\":\"dir\"")
		"{\"time\":\"2026-12-03T11:00:00.000Z\",\"event\":\"changes\",\"records\":1,\"dropped\":4,\"complete\":false}\n";
	static const char unhashed[] = MNT
		C("01.000", "\"op\":\"write\",\"path\":\"/m/a\",\"closes\":1,\"unhashed\":\"the recorder was behind\"") END;

	(void)state;
	assert_int_equal(review(open, NULL, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "INCOMPLETE: no summary closes the record"));
	assert_int_equal(review(dropped, NULL, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "INCOMPLETE: 4 changes were not recorded"));
	assert_int_equal(review(unhashed, NULL, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "INCOMPLETE: 1 written files were recorded without a hash"));
	/* a write through a removed name of a file no other name of which is known */
	assert_int_equal(review(MNT C("01.000", "\"op\":\"write\",\"path\":\"/m/a (deleted)\",\"object\":\"1:7\",\"closes\":1,\"size\":1,\"sha256\":\"" H1 "\"") END,
				NULL, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "INCOMPLETE: 1 changes were made through a name removed since"));
	assert_int_equal(review(MNT END, NULL, out, sizeof(out)), 0);
	assert_int_equal(review("not json\n", NULL, out, sizeof(out)), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_net_changes),
		cmocka_unit_test(test_hard_links),
		cmocka_unit_test(test_incomplete),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
