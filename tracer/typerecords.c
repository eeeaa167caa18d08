/* A file view's filetype into the trace: its description (typedesc.c) as
 * type records, each distinct type written once a rank. */
#define _GNU_SOURCE
#include "runtime_shared.h"

#include <stdlib.h>

/* Type records written so far, each distinct type once a rank: their payloads
 * but for the id, which is their index here. */
static struct seen_type { uint64_t hash; size_t len; unsigned char *bytes; } *types_seen;
static size_t ntypes_seen, types_cap;
static uint32_t *type_index;         /* open addressing by hash: index + 1, 0 empty */
static size_t index_cap;             /* a power of two, at least twice ntypes_seen */

static int index_grow(void)
{
    size_t cap = index_cap ? 2 * index_cap : 64;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t) return -1;
    for (size_t i = 0; i < ntypes_seen; i++) {
        size_t k = types_seen[i].hash & (cap - 1);
        while (t[k]) k = (k + 1) & (cap - 1);
        t[k] = (uint32_t)i + 1;
    }
    free(type_index);
    type_index = t;
    index_cap = cap;
    return 0;
}

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* The id of one node, its children's ids given: the type already written, or a
 * new record (META_TYPE, attached to event seq); UINT32_MAX if it cannot be. */
static uint32_t emit_type(const struct iom_tnode *n, const uint32_t *kid_ids, uint64_t seq)
{
    struct { uint32_t comb; int32_t ni, na, nd; uint32_t pad; int64_t size, lb, extent; }
        __attribute__((packed)) head = {n->comb, n->ni, n->na, n->nd, 0, n->size, n->lb, n->extent};
    size_t li = pad8(4 * (size_t)n->ni), la = 8 * (size_t)n->na, lk = pad8(4 * (size_t)n->nd);
    size_t len = sizeof head + li + la + lk;
    unsigned char *b = calloc(1, len);
    if (!b) return UINT32_MAX;
    memcpy(b, &head, sizeof head);
    for (int i = 0; i < n->ni; i++) { int32_t v = n->iv[i]; memcpy(b + sizeof head + 4 * (size_t)i, &v, 4); }
    for (int i = 0; i < n->na; i++) { int64_t v = n->av[i]; memcpy(b + sizeof head + li + 8 * (size_t)i, &v, 8); }
    if (n->nd) memcpy(b + sizeof head + li + la, kid_ids, 4 * (size_t)n->nd);
    uint64_t h = fnv1a(b, len);
    if (2 * (ntypes_seen + 1) > index_cap && index_grow() != 0) { free(b); return UINT32_MAX; }
    size_t k = h & (index_cap - 1);
    for (; type_index[k]; k = (k + 1) & (index_cap - 1)) {
        const struct seen_type *t = &types_seen[type_index[k] - 1];
        if (t->hash == h && t->len == len && !memcmp(t->bytes, b, len)) {
            free(b);
            return type_index[k] - 1;
        }
    }
    if (ntypes_seen == types_cap) {
        size_t cap = types_cap ? 2 * types_cap : 16;
        struct seen_type *t = realloc(types_seen, cap * sizeof *t);
        if (!t) { free(b); return UINT32_MAX; }
        types_seen = t;
        types_cap = cap;
    }
    size_t total;
    unsigned char *p = meta_begin(META_TYPE, 4 + len, seq, &total);   /* the id, then b: 48 + ... */
    if (!p) { free(b); return UINT32_MAX; }
    uint32_t id = (uint32_t)ntypes_seen;
    memcpy(p + sizeof(struct meta_header), &id, 4);
    memcpy(p + sizeof(struct meta_header) + 4, b, len);
    meta_end(p, total);
    types_seen[ntypes_seen++] = (struct seen_type){h, len, b};
    type_index[k] = id + 1;          /* k: the empty slot the probe ended on */
    return id;
}

/* The records of a description not yet written; the root's id, or UINT32_MAX. */
uint32_t emit_types(const struct iom_tdesc *d, uint64_t seq)
{
    uint32_t *ids = malloc((d->count + 1) * sizeof *ids), root = UINT32_MAX;
    size_t i = 0;
    for (; ids && i < d->count; i++) {
        const struct iom_tnode *n = &d->n[i];
        uint32_t *k = malloc(sizeof *k * (size_t)(n->nd + 1));
        if (!k) break;
        int missing = 0;
        for (int j = 0; j < n->nd; j++) missing |= (k[j] = ids[n->kids[j]]) == UINT32_MAX;
        ids[i] = missing ? UINT32_MAX : emit_type(n, k, seq);
        free(k);
    }
    if (ids && i == d->count && i) root = ids[i - 1];     /* the root is the last node */
    free(ids);
    return root;
}
