/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stage.c - the table of temporaries beside single-file rules (stage.h).
 *
 * A list: it holds at most AWFS_STAGE_PER_UID entries per uid, a handful in
 * practice, and is empty almost always, when stage_find() costs one test.
 */
#include "stage.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static struct awfs_staged *head;

struct awfs_staged *stage_find(const struct awfs_inode *dir, const char *name)
{
	for (struct awfs_staged *s = head; s; s = s->next)
		if (s->dir == dir && strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

size_t stage_count(uid_t uid)
{
	size_t n = 0;

	for (const struct awfs_staged *s = head; s; s = s->next)
		n += s->uid == uid;
	return n;
}

struct awfs_staged *stage_add(struct awfs_inode *dir, const char *name, struct awfs_inode *in,
			      int keep, char *hidden, int hidden_dir, uid_t uid)
{
	struct awfs_staged *s = util_xcalloc(1, sizeof(*s));

	s->dir = dir;
	s->name = util_xstrdup(name);
	s->in = in;
	s->keep = keep;
	s->hidden = hidden;
	s->hidden_dir = hidden_dir;
	s->uid = uid;
	s->next = head;
	head = s;
	in->staged = 1;
	in->unnamed = 1;
	return s;
}

void stage_drop(struct awfs_staged *s)
{
	struct awfs_staged **pp = &head;

	while (*pp != s)
		pp = &(*pp)->next;
	*pp = s->next;
	s->in->staged = 0;
	close(s->keep);
	if (s->hidden_dir >= 0)
		close(s->hidden_dir);
	inode_put(s->in, 1);
	free(s->hidden);
	free(s->name);
	free(s);
}

bool stage_is_hidden(const char *name)
{
	return strncmp(name, AWFS_STAGE_PREFIX, sizeof(AWFS_STAGE_PREFIX) - 1) == 0;
}

void stage_fini(void (*left)(const struct awfs_staged *s))
{
	while (head) {
		if (left)
			left(head);
		stage_drop(head);
	}
}
