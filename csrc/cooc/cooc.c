/* Co-occurrence counts of the coherence measures (Röder, Both & Hinneburg, WSDM 2015,
 * section 3.2): boolean documents and boolean sliding windows.  Prototypes and their
 * documentation: cooc_api.h, generated from csrc/signatures.txt. */
#include "cg_internal.h"
#include "cooc_api.h"

/* Position of (u, v), u <= v, in a packed upper triangle of n words: row u starts after
 * the n + (n - 1) + ... + (n - u + 1) entries of the rows above it. */
static inline int64_t cg_cooc_tri(int64_t u, int64_t v, int64_t n)
{
    return u * n - u * (u - 1) / 2 + (v - u);
}

static inline void cg_cooc_add_pair(int64_t *CG_RESTRICT tri, int64_t u, int64_t v,
                                    int64_t n, int64_t amount)
{
    if (u > v) {
        const int64_t t = u;
        u = v;
        v = t;
    }
    tri[cg_cooc_tri(u, v, n)] += amount;
}

static inline int cg_cooc_thread(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* counts[u, v] += sum over the threads' triangles (and the mirror entry), parallel over
 * rows u: each entry of counts is written by one thread. */
static void cg_cooc_reduce(int64_t *const *acc, int n_acc, int64_t n, int64_t *counts,
                           int64_t ld_counts)
{
    int64_t u;
    #pragma omp for schedule(dynamic, 8)
    for (u = 0; u < n; u++) {
        for (int64_t v = u; v < n; v++) {
            const int64_t at = cg_cooc_tri(u, v, n);
            int64_t s = 0;
            for (int t = 0; t < n_acc; t++)
                if (acc[t] != NULL)
                    s += acc[t][at];
            counts[u * ld_counts + v] += s;
            if (v != u)
                counts[v * ld_counts + u] += s;
        }
    }
}

/* The end of a thread of a counting region, after its loop's implicit barrier (every
 * triangle is complete): the triangles summed into counts unless a thread failed, the
 * thread's scratch freed. */
static void cg_cooc_thread_end(int ok, int64_t *const *acc, int n_acc, int64_t n,
                               int64_t *counts, int64_t ld_counts, void *mem)
{
    if (ok)
        cg_cooc_reduce(acc, n_acc, n, counts, ld_counts);
    free(mem);
}

/* The status of a counting kernel after its region; frees the table of triangles. */
static int cg_cooc_status(int64_t **acc, int failed, int bad)
{
    free(acc);
    if (failed)
        return CG_ERR_ALLOC;
    return bad ? CG_ERR_INDEX : CG_OK;
}

/* Arguments both kernels share: sizes in range, the scratch pointer table. */
static int cg_cooc_check(int64_t n_relevant, int64_t ld_counts, const int64_t *counts)
{
    if (n_relevant < 0 || n_relevant > (int64_t)CG_COOC_MAX_WORDS || ld_counts < n_relevant
        || (n_relevant > 0 && counts == NULL))
        return CG_ERR_ARGUMENT;
    return CG_OK;
}

#define CG_COOC_FN(name) CG_CAT3(name, _, ISUF)
#define CG_TEMPLATE_INDEXED
#define CG_TEMPLATE "cooc/cooc_docs_impl.h"
#include "common/cg_instantiate_index.h"
#undef CG_TEMPLATE
#undef CG_TEMPLATE_INDEXED

/* ------------------------------------------------------------- boolean sliding windows */

/* One thread's state over a text: which relevant words the current window holds (a list
 * with each word's place in it, pos[u] = -1 when absent), since which window (start[u]),
 * and, for rule 0, how many of each word's tokens the window holds (mult[u]). */
typedef struct {
    int64_t n;
    int64_t *tri;
    int64_t *start;
    int64_t *pos;
    int64_t *mult;
    int32_t *list;
    int64_t n_present;
} cg_cooc_state;

static inline void cg_cooc_enter(cg_cooc_state *s, int32_t u, int64_t t)
{
    s->start[u] = t;
    s->pos[u] = s->n_present;
    s->list[s->n_present++] = u;
}

/* Word u leaves before window t: it was present in windows [start[u], t), and so was each
 * pair (u, v) in [max(start[u], start[v]), t) for every v still present.  Each pair of
 * presence intervals is counted once, when the first of the two closes. */
static inline void cg_cooc_leave(cg_cooc_state *s, int32_t u, int64_t t)
{
    const int64_t su = s->start[u];
    const int64_t at = s->pos[u];
    int32_t last;
    s->tri[cg_cooc_tri(u, u, s->n)] += t - su;
    for (int64_t i = 0; i < s->n_present; i++) {
        const int32_t v = s->list[i];
        if (v != u) {
            const int64_t sv = s->start[v];
            cg_cooc_add_pair(s->tri, u, v, s->n, t - (su > sv ? su : sv));
        }
    }
    last = s->list[--s->n_present];
    s->list[at] = last;
    s->pos[last] = at;
    s->pos[u] = -1;
}

/* The windows of one text tok[0..len): returns their number. */
static int64_t cg_cooc_text(cg_cooc_state *s, const int32_t *tok, int64_t len,
                            int64_t window, int rule)
{
    const int64_t n_win = len >= window ? len - window + 1 : 1;
    const int64_t first = len < window ? len : window;
    int64_t p, t;
    for (p = 0; p < first; p++) {
        const int32_t u = tok[p];
        if (u < 0)
            continue;
        if (rule == 0) {
            if (s->mult[u]++ == 0)
                cg_cooc_enter(s, u, 0);
        } else if (s->pos[u] < 0) {
            cg_cooc_enter(s, u, 0);
        }
    }
    for (t = 1; t < n_win; t++) {
        const int32_t out = tok[t - 1], in = tok[t - 1 + window];
        if (rule == 0) {
            /* the entering token first: a word that leaves and enters stays present */
            if (in >= 0 && s->mult[in]++ == 0)
                cg_cooc_enter(s, in, t);
            if (out >= 0 && --s->mult[out] == 0)
                cg_cooc_leave(s, out, t);
        } else {
            /* gensim: uniq[out] = False, then uniq[in] = True */
            if (out >= 0 && out != in && s->pos[out] >= 0)
                cg_cooc_leave(s, out, t);
            if (in >= 0 && s->pos[in] < 0)
                cg_cooc_enter(s, in, t);
        }
    }
    while (s->n_present > 0) {
        const int32_t u = s->list[s->n_present - 1];
        if (rule == 0)
            s->mult[u] = 0;
        cg_cooc_leave(s, u, n_win);
    }
    return n_win;
}

int cg_cooc_windows(int64_t n_texts, const int64_t *offsets, const int32_t *tokens,
                    int64_t n_tokens, int64_t window, int rule, int64_t n_relevant,
                    int64_t *counts, int64_t ld_counts, int64_t *n_windows,
                    int num_threads)
{
    const int nt = cg_resolve_threads(num_threads);
    const int64_t n = n_relevant;
    int64_t **acc;
    int64_t total = 0;
    int bad = 0, failed = 0, rc;
    if (n_texts < 0 || n_tokens < 0 || window < 1 || (rule != 0 && rule != 1)
        || n_windows == NULL || cg_cooc_check(n_relevant, ld_counts, counts) != CG_OK)
        return CG_ERR_ARGUMENT;
    if (n_texts == 0)
        return CG_OK;
    if (offsets == NULL || (n_tokens > 0 && tokens == NULL))
        return CG_ERR_ARGUMENT;
    acc = (int64_t **)calloc((size_t)nt, sizeof(int64_t *));
    if (acc == NULL)
        return CG_ERR_ALLOC;
    #pragma omp parallel num_threads(nt) reduction(+:total)
    {
        const int64_t n_tri = n * (n + 1) / 2;
        /* triangle, then start, pos, mult (int64) and the list (int32) */
        int64_t *mem = (int64_t *)cg_thread_scratch(
            (size_t)(n_tri + 3 * n) * sizeof(int64_t) + (size_t)n * sizeof(int32_t), &failed);
        cg_cooc_state s = {0, NULL, NULL, NULL, NULL, NULL, 0};
        int64_t i;
        if (mem != NULL) {
            memset(mem, 0, (size_t)(n_tri + 3 * n) * sizeof(int64_t));
            s.n = n;
            s.tri = mem;
            s.start = mem + n_tri;
            s.pos = s.start + n;
            s.mult = s.pos + n;
            s.list = (int32_t *)(s.mult + n);
            s.n_present = 0;
            for (i = 0; i < n; i++)
                s.pos[i] = -1;
        }
        acc[cg_cooc_thread()] = mem;
        #pragma omp for schedule(dynamic, 16)
        for (i = 0; i < n_texts; i++) {
            const int64_t a = offsets[i], b = offsets[i + 1];
            int64_t p;
            if (cg_skip_row(mem != NULL, a, b, n_tokens, &bad))
                continue;
            for (p = a; p < b; p++)
                if (tokens[p] >= n)
                    break;
            if (p < b) {
                cg_raise(&bad);
                continue;
            }
            total += cg_cooc_text(&s, tokens + a, b - a, window, rule);
        }
        cg_cooc_thread_end(!failed && !bad, acc, nt, n, counts, ld_counts, mem);
    }
    rc = cg_cooc_status(acc, failed, bad);
    if (rc == CG_OK)
        *n_windows += total;
    return rc;
}
