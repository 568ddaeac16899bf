/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sha256.h - SHA-256 (FIPS 180-4), for the change record's file hashes
 * (changes.h). Small and without a library: awfs links nothing for it.
 */
#ifndef AWFS_SHA256_H
#define AWFS_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;		/* bytes hashed so far */
	unsigned char buf[64];	/* a block being filled */
	size_t used;		/* bytes in buf */
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
/* Finish: the digest as 64 lowercase hex digits and a NUL in @hex. */
void sha256_hex(struct sha256 *s, char hex[65]);

#endif
