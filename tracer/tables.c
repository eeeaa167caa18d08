/* The tracer's tables: open files by MPI handle and by descriptor, each an
 * open-file slot that events name, and the pending nonblocking requests. */
#define _GNU_SOURCE
#include "runtime_shared.h"

#include <stdlib.h>

/* ------------------------------------------------- pointer -> value tables */

static size_t pm_hash(uintptr_t k, size_t cap) { return (size_t)((k >> 4) * 0x9E3779B97F4A7C15ull) & (cap - 1); }

int pm_get(const struct ptrmap *m, uintptr_t k, uint64_t *v)
{
    if (!m->cap || k <= TOMB) return 0;
    for (size_t i = pm_hash(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->key[i] == k) { *v = m->val[i]; return 1; }
        if (!m->key[i]) return 0;
    }
}

void pm_put(struct ptrmap *m, uintptr_t k, uint64_t v);

static void pm_grow(struct ptrmap *m)
{
    struct ptrmap n = {0};
    n.cap = m->cap ? m->cap * 2 : 64;
    n.key = calloc(n.cap, sizeof *n.key);
    n.val = calloc(n.cap, sizeof *n.val);
    if (!n.key || !n.val) { free(n.key); free(n.val); return; }
    for (size_t i = 0; i < m->cap; i++)
        if (m->key[i] > TOMB) pm_put(&n, m->key[i], m->val[i]);
    free(m->key);
    free(m->val);
    *m = n;
}

void pm_put(struct ptrmap *m, uintptr_t k, uint64_t v)
{
    if (k <= TOMB) return;              /* 0 and 1 mark empty and deleted places */
    if ((m->used + 1) * 2 > m->cap) pm_grow(m);
    if (!m->cap) return;
    size_t i = pm_hash(k, m->cap), tomb = (size_t)-1;
    for (;; i = (i + 1) & (m->cap - 1)) {
        if (m->key[i] == k) { m->val[i] = v; return; }
        if (m->key[i] == TOMB && tomb == (size_t)-1) tomb = i;
        if (!m->key[i]) break;
    }
    if (tomb != (size_t)-1) i = tomb; else m->used++;
    m->key[i] = k;
    m->val[i] = v;
}

int pm_del(struct ptrmap *m, uintptr_t k, uint64_t *v)
{
    if (!m->cap || k <= TOMB) return 0;
    for (size_t i = pm_hash(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->key[i] == k) { if (v) *v = m->val[i]; m->key[i] = TOMB; return 1; }
        if (!m->key[i]) return 0;
    }
}

/* --------------------------------------------------------- open-file slots */

struct ptrmap files, requests;
struct slot *slots;
int nslots, *free_slots, nfree;
MPI_File last_fh;                        /* 0: none (the lookup's cache) */
int last_slot = IOM_NO_SLOT;

int iom_slot_of(MPI_File fh)
{
    LOCK();
    int s = slot_lookup(fh);
    UNLOCK();
    return s;
}

int slot_new(void)
{
    int s;
    if (nfree) s = free_slots[--nfree];
    else if (nslots < (int)IOM_NO_SLOT) {
        struct slot *ns = realloc(slots, sizeof *slots * (size_t)(nslots + 1));
        int *nf = realloc(free_slots, sizeof *free_slots * (size_t)(nslots + 1));
        if (!ns || !nf) { if (ns) slots = ns; if (nf) free_slots = nf; return IOM_NO_SLOT; }
        slots = ns;
        free_slots = nf;
        s = nslots++;
    } else return IOM_NO_SLOT;
    slots[s] = (struct slot){UINT64_MAX, 1, 0, 0, 1, -1};
    return s;
}

void slot_free(int s)
{
    slots[s].busy = 0;
    free_slots[nfree++] = s;
}

int slot_alloc(MPI_File fh)
{
    int s = slot_new();
    if (s == (int)IOM_NO_SLOT) return s;
    pm_put(&files, (uintptr_t)fh, (uint64_t)s);
    last_fh = 0;
    return s;
}

void forget(int f, int slot)
{
    if (f >= 0 && f < iom_nfd && iom_fdslot[f] == slot + 1) {
        iom_fdslot[f] = 0;
        if (--slots[slot].refs <= 0)          /* the last descriptor of its open (dup) */
            slot_free(slot);
    }
}
