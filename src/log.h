/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.h - where awfs's messages go, how names are escaped in them, and the
 * rate limit that keeps a denial flood from filling the disk.
 *
 * Invariants:
 *  - a line never carries a raw control character, invalid UTF-8 or a
 *    bidi override (no log injection): log_msg() escapes every formatted
 *    message once, where it is written, as log_escape_text() does. What
 *    log_escape() or log_quote_path() produced is printable and valid, so
 *    it passes that unchanged (a fixed point: nothing is escaped twice);
 *  - a name from the host or the agent that stands inside quotes, or beside
 *    text it could pass for, is still escaped by the caller with
 *    log_escape() or log_quote_path(): the sink keeps '"' and '\\', so only
 *    the caller can keep such a field unambiguous;
 *  - a line is written with one write() call, so concurrent lines never
 *    interleave;
 *  - denials are rate-limited, in lines per second and in bytes per hour and
 *    per mount; what was suppressed is counted and reported;
 *  - a path in a line is shortened, never the line's start: who was denied,
 *    by which rule, with which errno, comes before any name.
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

/*
 * The byte budget of denial lines (and their audit records): per mount, and
 * a bucket of AWFS_LOG_BYTES_BURST refilled at AWFS_LOG_BYTES_PER_HOUR. A
 * flood of the longest lines then writes at most these, not what ten lines
 * a second of 8 KiB would (290 MB an hour).
 */
#define AWFS_LOG_BYTES_PER_HOUR (16.0 * 1024 * 1024)
#define AWFS_LOG_BYTES_BURST (2.0 * 1024 * 1024)
#define AWFS_LOG_BYTES_PER_MOUNT (256ULL * 1024 * 1024)

/* A byte budget: a bucket of @burst bytes refilled at @rate a second, and a @total cap. */
struct awfs_bytelimit {
	double rate;
	double burst;
	double tokens;
	double last;
	uint64_t total;
	uint64_t used;		/* bytes charged so far */
};

void bytelimit_init(struct awfs_bytelimit *bl, double rate, double burst, uint64_t total);
/*
 * May more be written at time @now (seconds)? True while the bucket holds
 * any bytes and the total is not reached; what is written is charged after
 * (bytelimit_charge()), so a writer goes over by one record at most.
 */
bool bytelimit_allow(struct awfs_bytelimit *bl, double now);
void bytelimit_charge(struct awfs_bytelimit *bl, size_t n);

/* Start a bucket full. */
void ratelimit_init(struct awfs_ratelimit *rl, double rate, double burst);
/*
 * Take a token at time @now (seconds). Returns true when a line may be
 * written; *suppressed then holds how many were refused since the last one.
 */
bool ratelimit_take(struct awfs_ratelimit *rl, double now, uint64_t *suppressed);
/* Count a line refused for another reason (the byte budget) as suppressed; returns false. */
bool ratelimit_refuse(struct awfs_ratelimit *rl);

/*
 * Escape @len bytes of @in into @out (NUL-terminated, truncated with "..." to
 * fit @outsz). Printable ASCII and valid, printable UTF-8 pass; '\\', '"',
 * controls, C1 controls, bidi overrides and invalid bytes become escapes.
 * Returns @out.
 */
char *log_escape(const char *in, size_t len, char *out, size_t outsz);

/*
 * The most escaped bytes a path takes in a log line: a longer one is shown
 * as its start, a mark saying how many bytes were left out, and its end
 * (log_escape_path()), so that a line always has room for the rest.
 */
#define AWFS_LOG_PATH_MAX 1024

/*
 * Escape the path @in (@len bytes) as log_escape() does, into @out (at least
 * AWFS_LOG_PATH_MAX + 1 bytes): whole when it fits AWFS_LOG_PATH_MAX, else
 * its first and last bytes around a visible "[...N bytes...]" mark. Never
 * ends inside an escape. Returns @out.
 */
char *log_escape_path(const char *in, size_t len, char *out, size_t outsz);

/*
 * The path @in (@len bytes) as a log line shows a name the agent chose:
 * escaped as log_escape() does, in double quotes, so that no name can end
 * the field or pass for the text around it ('"' and '\\' inside are
 * escaped). A long one is its two ends, each quoted, around the mark,
 * which stands outside the quotes where no name can forge it:
 * "/tmp/gh-aw/rw/aaa"[...3000 bytes...]"aaa/x". @out takes at least
 * AWFS_LOG_PATH_MAX + 5 bytes. Returns @out.
 */
char *log_quote_path(const char *in, size_t len, char *out, size_t outsz);

/*
 * The same for text meant to be read as is (the .awfs README): quotes and
 * backslashes stay; controls and invalid bytes are still escaped.
 */
char *log_escape_text(const char *in, size_t len, char *out, size_t outsz);

/*
 * Open the log: "stderr", "syslog" or a file path (appended; see
 * util_open_append() for what a file must be). Returns 0, or -1 with the
 * reason in @why.
 */
int log_open(const char *dest, char *why, size_t len);
/*
 * Write one formatted line; the sink escapes it (see the invariants above),
 * so an argument left raw cannot break the line.
 */
void log_msg(enum awfs_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Close the log. */
void log_close(void);

/* Seconds on the monotonic clock. */
double log_now(void);

#endif
