/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.h - where awfs's messages go, how names are escaped in them, and the
 * rate limit that keeps a denial flood from filling the disk.
 *
 * Invariants:
 *  - every byte that came from a file name or a process name is passed
 *    through log_escape() before it is written: a line never carries a raw
 *    control character or invalid UTF-8 (no log injection);
 *  - a line is written with one write() call, so concurrent lines never
 *    interleave;
 *  - denials are rate-limited; what was suppressed is counted and reported.
 */
#ifndef AWFS_LOG_H
#define AWFS_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum awfs_log_level {
	AWFS_LOG_ERR,
	AWFS_LOG_WARN,
	AWFS_LOG_INFO,
	AWFS_LOG_DEBUG,
};

/* A token bucket: @burst lines at once, then @rate lines per second. */
struct awfs_ratelimit {
	double rate;
	double burst;
	double tokens;
	double last;
	uint64_t suppressed;	/* denied since the last allowed line */
	uint64_t total_suppressed;
};

/* Start a bucket full. */
void ratelimit_init(struct awfs_ratelimit *rl, double rate, double burst);
/*
 * Take a token at time @now (seconds). Returns true when a line may be
 * written; *suppressed then holds how many were refused since the last one.
 */
bool ratelimit_take(struct awfs_ratelimit *rl, double now, uint64_t *suppressed);

/*
 * Escape @len bytes of @in into @out (NUL-terminated, truncated with "..." to
 * fit @outsz). Printable ASCII and valid, printable UTF-8 pass; '\\', '"',
 * controls, C1 controls, bidi overrides and invalid bytes become escapes.
 * Returns @out.
 */
char *log_escape(const char *in, size_t len, char *out, size_t outsz);

/*
 * The same for text meant to be read as is (the .awfs README): quotes and
 * backslashes stay; controls and invalid bytes are still escaped.
 */
char *log_escape_text(const char *in, size_t len, char *out, size_t outsz);

/*
 * Open the log: "stderr", "syslog" or a file path (appended). Returns 0 or
 * an errno value.
 */
int log_open(const char *dest);
/* Raise or lower the level written (default AWFS_LOG_INFO). */
void log_set_level(enum awfs_log_level level);
/* Write one formatted line (the format's arguments must already be escaped). */
void log_msg(enum awfs_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Close the log. */
void log_close(void);

/* Seconds on the monotonic clock. */
double log_now(void);

#endif
