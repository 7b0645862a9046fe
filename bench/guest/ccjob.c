// SPDX-License-Identifier: GPL-2.0
/*
 * ccjob N: one short "compiler-like" process for the benchmark's mixed
 * workload (thpbench ccloop runs many of them one after the other).
 *
 * It does what a compiler's front end does to memory: reads a source
 * (generates it into a 1 MiB malloc'd buffer, which glibc mmaps),
 * tokenizes it into many small objects (an AST of nodes of 24 to 256
 * bytes, 6 to 12 MiB) that it takes from 2 MiB chunks it mmaps itself, as
 * GCC's garbage-collected heap does (ggc-page.cc: GGC_QUIRE_SIZE pages at
 * a time), keeps a symbol hash table, drops a third of the nodes (passes
 * that no longer need them: they stay in their chunk, as in a GC heap),
 * allocates an IR of small nodes with malloc (the brk heap), and writes a
 * small "object file" to /tmp.  The size varies with N, as translation
 * units do.  Exits 0 if its checksum of the symbol table matches the one
 * computed while building it.
 */
#include <sys/mman.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
	struct node *left, *right, *next;
	uint32_t kind, hash;
	char text[];
};

#define NBUCKETS 4096

static uint32_t rnd_state;

#define CHUNK (2UL << 20)
static char *chunk_cur, *chunk_end;

/* A bump allocator over 2 MiB mmap'd chunks (a GC heap's pages). */
static void *gc_alloc(size_t size)
{
	void *p;

	size = (size + 15) & ~15UL;
	if (!chunk_cur || chunk_cur + size > chunk_end) {
		chunk_cur = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (chunk_cur == MAP_FAILED)
			return NULL;
		chunk_end = chunk_cur + CHUNK;
	}
	p = chunk_cur;
	chunk_cur += size;
	return p;
}

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

static uint32_t hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 0;
	size_t srclen = (1 << 20) + (n % 7) * (128 << 10), i, tok;
	size_t nodes = 40000 + (n % 5) * 10000;
	struct node **all, **buckets, *root = NULL;
	uint64_t sum = 0, check = 0;
	char *src, path[64];
	FILE *out;

	rnd_state = 2463534242u + (uint32_t)n * 7919u;
	src = malloc(srclen);
	all = calloc(nodes, sizeof(*all));
	buckets = calloc(NBUCKETS, sizeof(*buckets));
	if (!src || !all || !buckets)
		return 1;
	/* The "source": identifiers and punctuation. */
	for (i = 0; i < srclen; i++) {
		static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789 ;()";

		src[i] = alphabet[rnd() % 40];
	}
	/* Tokens into nodes; identifiers into the symbol table. */
	for (i = 0, tok = 0; tok < nodes; tok++) {
		size_t len = 8 + rnd() % 232;
		struct node *nd;

		if (i + len >= srclen)
			i = 0;
		nd = gc_alloc(sizeof(*nd) + len + 1);
		if (!nd)
			return 1;
		memcpy(nd->text, src + i, len);
		nd->text[len] = 0;
		nd->kind = (uint32_t)len;
		nd->hash = hash(nd->text, len);
		nd->left = tok ? all[rnd() % tok] : NULL;
		nd->right = NULL;
		nd->next = buckets[nd->hash % NBUCKETS];
		buckets[nd->hash % NBUCKETS] = nd;
		all[tok] = nd;
		sum += nd->hash;
		i += len;
	}
	/* A pass frees a third of the nodes it no longer needs ... */
	for (tok = 0; tok < nodes; tok++) {
		if (tok % 3 == 1) {
			sum -= all[tok]->hash;
			all[tok]->kind = 0;
		}
	}
	for (i = 0; i < NBUCKETS; i++) {
		struct node **pp = &buckets[i];

		while (*pp) {
			if (!(*pp)->kind)
				*pp = (*pp)->next;
			else
				pp = &(*pp)->next;
		}
	}
	for (tok = 0; tok < nodes; tok++)
		if (tok % 3 == 1)
			all[tok] = NULL;
	/* ... and the next one allocates again (an IR of smaller nodes). */
	for (tok = 0; tok < nodes; tok += 2) {
		struct node *nd = malloc(sizeof(*nd) + 24);

		if (!nd)
			return 1;
		memset(nd, 0, sizeof(*nd) + 24);
		nd->right = root;
		root = nd;
	}
	for (i = 0; i < NBUCKETS; i++)
		for (struct node *nd = buckets[i]; nd; nd = nd->next)
			check += nd->hash;
	/* The "object file". */
	snprintf(path, sizeof(path), "/tmp/ccjob.%lu.o", n % 8);
	out = fopen(path, "w");
	if (!out)
		return 1;
	for (tok = 0; tok < nodes; tok += 4)
		if (all[tok])
			fwrite(all[tok]->text, 1, 8, out);
	fclose(out);
	return check == sum ? 0 : 1;
}
