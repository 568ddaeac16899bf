/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * classify.c - per-component rule matching as interned states.
 *
 * Invariants:
 *  - no I/O: a state depends only on the policy, the parent state and a name;
 *  - states are never freed or changed before classify_free(), so a pointer
 *    to one may be kept anywhere without a reference count;
 *  - a masked state is terminal: nothing below a mask is ever classified,
 *    because nothing below a mask is ever looked up on the host.
 */
#include "classify.h"

#include <fnmatch.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct lit {
	const char *name;
	const struct awfs_rule *rule;
};

struct awfs_state {
	enum awfs_class cls;
	enum awfs_origin origin;
	const struct awfs_rule *winner;
	size_t depth;			/* components below the root; 0 once terminal */
	const struct awfs_rule **alive;	/* rules that may match deeper, sorted */
	size_t nalive;
	struct lit *lits;		/* alive rules with a literal next component, by name */
	size_t nlits;
	const struct awfs_rule **globs;	/* alive rules with a glob next component */
	size_t nglobs;
	const char **fixed_masks;	/* literal masks exactly one level down */
	size_t nfixed;
	const struct awfs_rule *anchored;	/* a non-writable alive rule, or NULL */
	uint64_t hash;
	struct awfs_state *next;	/* intern chain */
};

struct awfs_classifier {
	const struct awfs_policy *policy;
	struct awfs_state *root;
	struct awfs_state *unclassified;
	pthread_mutex_t lock;
	struct awfs_state **buckets;
	size_t nbuckets;
	size_t nstates;
};

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(const void *const *)a, y = (uintptr_t)*(const void *const *)b;

	return x < y ? -1 : x > y;
}

static int cmp_lit(const void *a, const void *b)
{
	return strcmp(((const struct lit *)a)->name, ((const struct lit *)b)->name);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h;
}

static uint64_t state_hash(const struct awfs_state *s)
{
	uint64_t h = mix(mix(mix(s->cls, s->origin), (uintptr_t)s->winner), s->depth);

	for (size_t i = 0; i < s->nalive; i++)
		h = mix(h, (uintptr_t)s->alive[i]);
	return h;
}

static bool state_equal(const struct awfs_state *a, const struct awfs_state *b)
{
	return a->hash == b->hash && a->cls == b->cls && a->origin == b->origin &&
	       a->winner == b->winner && a->depth == b->depth && a->nalive == b->nalive &&
	       memcmp(a->alive, b->alive, a->nalive * sizeof(*a->alive)) == 0;
}

/* Build the lookup index of a fresh state (its alive rules are set). */
static void state_index(struct awfs_state *s)
{
	s->lits = util_xcalloc(s->nalive, sizeof(*s->lits));
	s->globs = util_xcalloc(s->nalive, sizeof(*s->globs));
	s->fixed_masks = util_xcalloc(s->nalive, sizeof(*s->fixed_masks));
	for (size_t i = 0; i < s->nalive; i++) {
		const struct awfs_rule *r = s->alive[i];

		if (r->literal[s->depth]) {
			s->lits[s->nlits].name = r->comps[s->depth];
			s->lits[s->nlits++].rule = r;
			if (r->cls == AWFS_CLASS_MASK && r->ncomps == s->depth + 1)
				s->fixed_masks[s->nfixed++] = r->comps[s->depth];
		} else {
			s->globs[s->nglobs++] = r;
		}
		if (r->cls != AWFS_CLASS_WRITE && !s->anchored)
			s->anchored = r;
	}
	qsort(s->lits, s->nlits, sizeof(*s->lits), cmp_lit);
}

static void state_free(struct awfs_state *s)
{
	free(s->alive);
	free(s->lits);
	free(s->globs);
	free(s->fixed_masks);
	free(s);
}

/* Return the interned copy of @s, consuming @s. Caller holds c->lock. */
static struct awfs_state *intern(struct awfs_classifier *c, struct awfs_state *s)
{
	size_t b;

	s->hash = state_hash(s);
	if (c->nstates >= c->nbuckets) {
		size_t nb = c->nbuckets ? c->nbuckets * 2 : 64;
		struct awfs_state **nbk = util_xcalloc(nb, sizeof(*nbk));

		for (size_t i = 0; i < c->nbuckets; i++) {
			for (struct awfs_state *e = c->buckets[i], *nx; e; e = nx) {
				nx = e->next;
				e->next = nbk[e->hash % nb];
				nbk[e->hash % nb] = e;
			}
		}
		free(c->buckets);
		c->buckets = nbk;
		c->nbuckets = nb;
	}
	b = s->hash % c->nbuckets;
	for (struct awfs_state *e = c->buckets[b]; e; e = e->next) {
		if (state_equal(e, s)) {
			free(s->alive);
			free(s);
			return e;
		}
	}
	state_index(s);
	s->next = c->buckets[b];
	c->buckets[b] = s;
	c->nstates++;
	return s;
}

/*
 * Whether candidate @a beats @b; both matched the same number of components.
 * The first component where one is literal and the other a glob decides;
 * then the stricter class.
 */
static bool beats(const struct awfs_rule *a, const struct awfs_rule *b)
{
	for (size_t i = 0; i < a->ncomps; i++)
		if (a->literal[i] != b->literal[i])
			return a->literal[i];
	return a->cls > b->cls;
}

static struct awfs_state *state_new(enum awfs_class cls, enum awfs_origin origin,
				    const struct awfs_rule *winner)
{
	struct awfs_state *s = util_xcalloc(1, sizeof(*s));

	s->cls = cls;
	s->origin = origin;
	s->winner = winner;
	return s;
}

struct awfs_classifier *classify_new(const struct awfs_policy *p)
{
	struct awfs_classifier *c = util_xcalloc(1, sizeof(*c));
	const struct awfs_rule *dot = NULL;
	struct awfs_state *root;

	c->policy = p;
	pthread_mutex_init(&c->lock, NULL);
	for (size_t i = 0; i < p->nrules; i++)
		if (p->rules[i].ncomps == 0)
			dot = &p->rules[i];
	root = state_new(dot ? dot->cls : AWFS_CLASS_RO, dot ? AWFS_ORIGIN_RULE : AWFS_ORIGIN_ROOT, dot);
	if (root->cls != AWFS_CLASS_MASK) {
		root->alive = util_xcalloc(p->nrules, sizeof(*root->alive));
		for (size_t i = 0; i < p->nrules; i++)
			if (p->rules[i].ncomps > 0)
				root->alive[root->nalive++] = &p->rules[i];
		qsort(root->alive, root->nalive, sizeof(*root->alive), cmp_ptr);
	}
	c->root = intern(c, root);
	c->unclassified = intern(c, state_new(p->unclassified == AWFS_UNCLASSIFIED_MASK ?
					      AWFS_CLASS_MASK : AWFS_CLASS_RO,
					      AWFS_ORIGIN_UNCLASSIFIED, NULL));
	return c;
}

void classify_free(struct awfs_classifier *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nbuckets; i++) {
		for (struct awfs_state *e = c->buckets[i], *nx; e; e = nx) {
			nx = e->next;
			state_free(e);
		}
	}
	free(c->buckets);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

const struct awfs_state *classify_root(const struct awfs_classifier *c)
{
	return c->root;
}

/* Add a matching rule: it decides here, or stays alive for deeper levels. */
static void take(struct awfs_state *s, const struct awfs_rule *r, size_t depth,
		 const struct awfs_rule **best)
{
	if (r->ncomps == depth + 1) {
		if (!*best || beats(r, *best))
			*best = r;
	} else {
		s->alive[s->nalive++] = r;
	}
}

const struct awfs_state *classify_child(struct awfs_classifier *c, const struct awfs_state *parent,
					const char *name)
{
	const struct awfs_rule *best = NULL;
	struct awfs_state *s;
	const struct awfs_state *out;
	size_t depth = parent->depth;
	struct lit key = { .name = name };
	struct lit *hit, *end;

	/* the root is never terminal: its children may be unclassified */
	if ((parent->nalive == 0 && parent != c->root) || parent->cls == AWFS_CLASS_MASK)
		return parent;

	hit = bsearch(&key, parent->lits, parent->nlits, sizeof(*parent->lits), cmp_lit);
	end = hit;
	if (hit) {
		/* several rules can share this literal component: the run */
		while (hit > parent->lits && strcmp(hit[-1].name, name) == 0)
			hit--;
		while (end < parent->lits + parent->nlits && strcmp(end->name, name) == 0)
			end++;
	}
	s = util_xcalloc(1, sizeof(*s));
	/* room for what can match, not for every rule alive: a lookup costs
	 * log n in the rules, whatever their number */
	s->alive = util_xcalloc((size_t)(end - hit) + parent->nglobs + 1, sizeof(*s->alive));
	for (; hit < end; hit++)
		take(s, hit->rule, depth, &best);
	for (size_t i = 0; i < parent->nglobs; i++)
		if (fnmatch(parent->globs[i]->comps[depth], name, 0) == 0)
			take(s, parent->globs[i], depth, &best);

	if (best) {
		s->cls = best->cls;
		s->origin = AWFS_ORIGIN_RULE;
		s->winner = best;
	} else if (parent == c->root && s->nalive == 0 && parent->origin == AWFS_ORIGIN_ROOT) {
		free(s->alive);
		free(s);
		return c->unclassified;
	} else {
		s->cls = parent->cls;
		s->origin = parent->origin;
		s->winner = parent->winner;
	}
	if (s->cls == AWFS_CLASS_MASK)
		s->nalive = 0;
	s->depth = s->nalive ? depth + 1 : 0;
	qsort(s->alive, s->nalive, sizeof(*s->alive), cmp_ptr);

	pthread_mutex_lock(&c->lock);
	out = intern(c, s);
	pthread_mutex_unlock(&c->lock);
	return out;
}

enum awfs_class classify_class(const struct awfs_state *s)
{
	return s->cls;
}

enum awfs_origin classify_origin(const struct awfs_state *s)
{
	return s->origin;
}

const struct awfs_rule *classify_rule(const struct awfs_state *s)
{
	return s->winner;
}

const struct awfs_rule *classify_anchored(const struct awfs_state *s)
{
	return s->anchored;
}

size_t classify_alive(const struct awfs_state *s, const struct awfs_rule *const **rules)
{
	*rules = s->alive;
	return s->nalive;
}

size_t classify_depth(const struct awfs_state *s)
{
	return s->depth;
}

size_t classify_fixed_masks(const struct awfs_state *s, const char *const **names)
{
	*names = s->fixed_masks;
	return s->nfixed;
}
