/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.c - log sinks, escaping and the token-bucket rate limiter.
 */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

enum sink { SINK_STDERR, SINK_SYSLOG, SINK_FILE };

static enum sink sink = SINK_STDERR;
static int sink_fd = 2;
static const enum awfs_log_level max_level = AWFS_LOG_INFO;	/* debug lines are not written */

void ratelimit_init(struct awfs_ratelimit *rl, double rate, double burst)
{
	memset(rl, 0, sizeof(*rl));
	rl->rate = rate;
	rl->burst = burst;
	rl->tokens = burst;
	rl->last = -1;
}

/* Refill a token bucket for the time since *@last (a clock going back refills nothing). */
static void refill(double *tokens, double *last, double rate, double burst, double now)
{
	if (*last >= 0 && now > *last) {
		*tokens += (now - *last) * rate;
		if (*tokens > burst)
			*tokens = burst;
	}
	if (*last < 0 || now > *last)
		*last = now;
}

bool ratelimit_refuse(struct awfs_ratelimit *rl)
{
	rl->suppressed++;
	rl->total_suppressed++;
	return false;
}

bool ratelimit_take(struct awfs_ratelimit *rl, double now, uint64_t *suppressed)
{
	refill(&rl->tokens, &rl->last, rl->rate, rl->burst, now);
	if (rl->tokens < 1.0)
		return ratelimit_refuse(rl);
	rl->tokens -= 1.0;
	*suppressed = rl->suppressed;
	rl->suppressed = 0;
	return true;
}

void bytelimit_init(struct awfs_bytelimit *bl, double rate, double burst, uint64_t total)
{
	memset(bl, 0, sizeof(*bl));
	bl->rate = rate;
	bl->burst = burst;
	bl->tokens = burst;
	bl->last = -1;
	bl->total = total;
}

bool bytelimit_allow(struct awfs_bytelimit *bl, double now)
{
	refill(&bl->tokens, &bl->last, bl->rate, bl->burst, now);
	return bl->tokens > 0 && bl->used < bl->total;
}

void bytelimit_charge(struct awfs_bytelimit *bl, size_t n)
{
	bl->tokens -= (double)n;
	bl->used += n;
}


/* Escape the piece of @s at *@i into @tmp (at most 12 bytes); advance *@i. */
static size_t escape_piece(const unsigned char *s, size_t len, size_t *i, char *tmp, bool quotes)
{
	unsigned cp = 0;
	size_t ul = 0, tl;

	if (s[*i] >= 0x20 && s[*i] < 0x7f && (!quotes || (s[*i] != '\\' && s[*i] != '"'))) {
		tmp[0] = (char)s[*i];
		tl = 1;
		(*i)++;
	} else if (s[*i] == '\\' || s[*i] == '"') {
		tmp[0] = '\\';
		tmp[1] = (char)s[*i];
		tl = 2;
		(*i)++;
	} else if (s[*i] == '\n' || s[*i] == '\t' || s[*i] == '\r') {
		tmp[0] = '\\';
		tmp[1] = s[*i] == '\n' ? 'n' : s[*i] == '\t' ? 't' : 'r';
		tl = 2;
		(*i)++;
	} else if (s[*i] >= 0x80 && (ul = util_utf8_len(s + *i, len - *i, &cp)) > 0) {
		if (util_cp_is_tricky(cp)) {
			tl = (size_t)snprintf(tmp, 16, cp > 0xffff ? "\\U%08x" : "\\u%04x", cp);
		} else {
			memcpy(tmp, s + *i, ul);
			tl = ul;
		}
		*i += ul;
	} else {
		tl = (size_t)snprintf(tmp, 16, "\\x%02x", s[*i]);
		(*i)++;
	}
	return tl;
}

static char *escape(const char *in, size_t len, char *out, size_t outsz, bool quotes)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0, total = 0, reserve;
	char tmp[16];

	if (outsz == 0)
		return out;
	for (size_t i = 0; i < len;)
		total += escape_piece(s, len, &i, tmp, quotes);
	/* when it all fits, no room is kept for the "..." of a cut */
	reserve = total + 1 <= outsz ? 1 : 4;
	for (size_t i = 0; i < len;) {
		size_t tl = escape_piece(s, len, &i, tmp, quotes);

		if (o + tl + reserve > outsz) {
			if (o + 4 <= outsz) {
				memcpy(out + o, "...", 3);
				o += 3;
			}
			break;
		}
		memcpy(out + o, tmp, tl);
		o += tl;
	}
	out[o] = '\0';
	return out;
}

char *log_escape(const char *in, size_t len, char *out, size_t outsz)
{
	return escape(in, len, out, outsz, true);
}

/* How long @len bytes of @in are once escaped. */
static size_t escaped_len(const char *in, size_t len, bool quotes)
{
	const unsigned char *u = (const unsigned char *)in;
	size_t total = 0;
	char tmp[16];

	for (size_t i = 0; i < len;)
		total += escape_piece(u, len, &i, tmp, quotes);
	return total;
}

/*
 * A path escaped, each part between @q (nothing, or a double quote): whole
 * when it fits AWFS_LOG_PATH_MAX escaped, else its two ends around a mark.
 */
static char *shorten_path(const char *in, size_t len, char *out, size_t outsz, const char *q)
{
	/*
	 * Raw bytes kept at each end. One byte escapes to at most four
	 * (\xNN), so the two ends and the mark stay well inside the maximum.
	 */
	enum { HEAD = AWFS_LOG_PATH_MAX / 16, TAIL = 2 * HEAD };
	char h[4 * HEAD + 1], t[4 * TAIL + 1], e[AWFS_LOG_PATH_MAX + 1];

	/* longer than the maximum escaped, so longer than HEAD + TAIL raw */
	if (escaped_len(in, len, true) <= AWFS_LOG_PATH_MAX) {
		escape(in, len, e, sizeof(e), true);
		snprintf(out, outsz, "%s%s%s", q, e, q);
		return out;
	}
	escape(in, HEAD, h, sizeof(h), true);
	escape(in + len - TAIL, TAIL, t, sizeof(t), true);
	snprintf(out, outsz, "%s%s%s[...%zu bytes...]%s%s%s", q, h, q, len - HEAD - TAIL, q, t, q);
	return out;
}

char *log_escape_path(const char *in, size_t len, char *out, size_t outsz)
{
	return shorten_path(in, len, out, outsz, "");
}

char *log_quote_path(const char *in, size_t len, char *out, size_t outsz)
{
	return shorten_path(in, len, out, outsz, "\"");
}

char *log_escape_text(const char *in, size_t len, char *out, size_t outsz)
{
	return escape(in, len, out, outsz, false);
}

int log_open(const char *dest, char *why, size_t len)
{
	if (!dest || strcmp(dest, "stderr") == 0) {
		sink = SINK_STDERR;
		sink_fd = 2;
	} else if (strcmp(dest, "syslog") == 0) {
		openlog("awfs", LOG_PID | LOG_NDELAY, LOG_DAEMON);
		sink = SINK_SYSLOG;
	} else {
		int fd = util_open_append(dest, why, len);

		if (fd < 0)
			return -1;
		sink = SINK_FILE;
		sink_fd = fd;
	}
	return 0;
}

double log_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The sink's escaping (log.h): every formatted message is passed through
 * log_escape_text()'s scheme here, once, so no argument a caller forgot to
 * escape can break a line or hide text. Text already escaped by
 * log_escape() is printable and valid, so it passes unchanged: denial lines
 * come out byte for byte as formatted. One byte escapes to at most four
 * (\xNN), hence the size of @line.
 */
void log_msg(enum awfs_log_level level, const char *fmt, ...)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
	enum { MSG = 8192 };
	char msg[MSG], line[64 + 4 * MSG];
	size_t off = 0, len;
	va_list ap;
	int n;

	if (level > max_level)
		return;
	if (sink == SINK_FILE) {
		struct timespec ts;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		off = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%SZ ", &tm);
	}
	if (sink != SINK_SYSLOG) {
		memcpy(line + off, "awfs: ", 6);
		off += 6;
	}
	/* cut where a line of MSG bytes, its prefix included, ends */
	va_start(ap, fmt);
	n = vsnprintf(msg, MSG - off - 1, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized): started above
	va_end(ap);
	if (n < 0)
		return;
	len = (size_t)n < MSG - off - 1 ? (size_t)n : MSG - off - 2;
	escape(msg, len, line + off, sizeof(line) - off - 1, false);
	off += strlen(line + off);
	if (sink == SINK_SYSLOG) {
		syslog(prio[level], "%s", line);
		return;
	}
	line[off++] = '\n';
	/* one write per line: concurrent threads never interleave */
	while (write(sink_fd, line, off) < 0 && errno == EINTR)
		;
}

void log_close(void)
{
	if (sink == SINK_SYSLOG)
		closelog();
	else if (sink == SINK_FILE)
		close(sink_fd);
	sink = SINK_STDERR;
	sink_fd = 2;
}
