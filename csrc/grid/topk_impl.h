/* Sparse posteriors: the k largest entries of each row of q (docs/counting_grids.md,
 * "Speed at scale"); included once per REAL type.
 *
 * Which entries.  Entries are ordered by value, ties by the lower position, so the kept
 * set is unique: with v* the k-th largest value, every entry > v* and, among the entries
 * equal to v*, the ones at the lowest positions.  Only v* has to be selected, a plain
 * k-th largest value: no comparison ever looks at positions.
 *
 * How.  (1) One pass that vectorises takes the maxima of M >= 2k groups of entries
 * (the entries l = j mod M form group j) and checks every entry; the k-th largest group
 * maximum tau is a lower bound of v* (k distinct entries, one per group, are >= tau).
 * (2) A pass copies the entries >= tau, in ascending position order, into a candidate
 * buffer (typically about 1.5k of them), branch-free inside the blocks of 16 entries that
 * a vectorised test does not skip.  (3) v* is selected among the candidates
 * by quickselect (nth_element) with pseudo-random pivots: expected O(n), branch-free
 * partitions (a random-order row
 * makes every comparison of a heap or of a branching partition a coin flip for the branch
 * predictor), three-way so that many equal values (uniform rows, zeros) end it at once;
 * after 2 log2(n) + 8 rounds without an answer (an adversarial row) a heap of the k best
 * finishes in O(n log k), so the worst case is O(L log k).  A full sort would cost
 * O(L log L).  (4) The candidates are compacted to the kept ones, still in ascending
 * position order (better locality in the accumulation), without sorting.  A row with
 * fewer than k entries above tau (a concentrated posterior: a bump above a floor most
 * entries equal) has v* = tau; its kept entries are written in one pass instead of
 * (2)-(4) (3.4x faster on the posteriors of a 48 x 48 grid, k = 32). */

/* an integer as wide as REAL, so that the block test vectorises */
#define CG_TOPK_MASK CG_CAT2(cg_topk_mask_, SUF)

/* a is worse than b: a smaller value, or the same value at a higher position */
static inline int CG_FN(cg_topk_worse)(REAL va, int64_t pa, REAL vb, int64_t pb)
{
    return va < vb || (va == vb && pa > pb);
}

/* Restores the heap property below node i (the worst entry at the root). */
static void CG_FN(cg_topk_sift)(REAL *hv, int64_t *hp, int64_t k, int64_t i)
{
    const REAL v = hv[i];
    const int64_t p = hp[i];
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= k)
            break;
        if (c + 1 < k && CG_FN(cg_topk_worse)(hv[c + 1], hp[c + 1], hv[c], hp[c]))
            c++;
        if (!CG_FN(cg_topk_worse)(hv[c], hp[c], v, p))
            break;
        hv[i] = hv[c];
        hp[i] = hp[c];
        i = c;
    }
    hv[i] = v;
    hp[i] = p;
}

/* The k-th largest of a[0..n) by a heap of the k best (hv, hp: k entries of scratch). */
static REAL CG_FN(cg_topk_heap_select)(const REAL *a, int64_t n, int64_t k, REAL *hv,
                                       int64_t *hp)
{
    int64_t i;
    for (i = 0; i < k; i++) {
        hv[i] = a[i];
        hp[i] = i;
    }
    for (i = k / 2 - 1; i >= 0; i--)
        CG_FN(cg_topk_sift)(hv, hp, k, i);
    for (i = k; i < n; i++)
        if (a[i] > hv[0]) {
            hv[0] = a[i];
            hp[0] = i;
            CG_FN(cg_topk_sift)(hv, hp, k, 0);
        }
    return hv[0];
}

/* Quickselect rounds allowed beyond 2 log2(n) before the heap takes over (a macro so
 * that the heap path can be tested by compiling with 0 and -DCG_TOPK_NO_LOG_ROUNDS). */
#ifndef CG_TOPK_EXTRA_ROUNDS
#define CG_TOPK_EXTRA_ROUNDS 8
#endif

/* The k-th largest value of a[0..n) (1 <= k <= n; a is reordered, values without NaN). */
static REAL CG_FN(cg_topk_select)(REAL *a, int64_t n, int64_t k, REAL *hv, int64_t *hp)
{
    int64_t lo = 0, hi = n, i, j, rounds = CG_TOPK_EXTRA_ROUNDS;
    const int64_t want = k - 1;                 /* index in decreasing order */
    uint64_t rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)n;
#ifndef CG_TOPK_NO_LOG_ROUNDS
    for (i = n; i > 1; i >>= 1)
        rounds += 2;
#endif
    while (hi - lo > 16) {
        REAL p, x, y, z;
        int64_t gt, eq;
        if (rounds-- == 0)
            return CG_FN(cg_topk_heap_select)(a + lo, hi - lo, want - lo + 1, hv, hp);
        /* median of three pseudo-random entries (a fixed sequence: candidates come in
         * position order, and a posterior's bump defeats first/middle/last) */
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        x = a[lo + (int64_t)((rng >> 33) % (uint64_t)(hi - lo))];
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        y = a[lo + (int64_t)((rng >> 33) % (uint64_t)(hi - lo))];
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        z = a[lo + (int64_t)((rng >> 33) % (uint64_t)(hi - lo))];
        p = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        /* [lo, gt): > p, then [gt, eq): == p, then [eq, hi): < p; branch-free swaps */
        for (gt = lo, j = lo; j < hi; j++) {
            const REAL v = a[j];
            a[j] = a[gt];
            a[gt] = v;
            gt += v > p;
        }
        if (want < gt) {
            hi = gt;
            continue;
        }
        for (eq = gt, j = gt; j < hi; j++) {
            const REAL v = a[j];
            a[j] = a[eq];
            a[eq] = v;
            eq += v >= p;
        }
        if (want < eq)
            return p;
        lo = eq;
    }
    /* insertion sort of the last few, decreasing */
    for (i = lo + 1; i < hi; i++) {
        const REAL v = a[i];
        for (j = i; j > lo && a[j - 1] < v; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
    return a[want];
}

/* Scratch of cg_topk_row for rows of L entries and k kept (kk = min(k, L)): group maxima
 * (M), candidates and their positions (L each), the selection copy (L), the heap (kk). */
typedef struct {
    REAL *gmax, *cv, *sel, *hv;
    int32_t *cp;
    int64_t *hp;
    int64_t kk, M;
    int grouped;
} CG_FN(cg_topk_scratch);

/* Allocates the scratch of one thread (cg_thread_scratch: failures raise *failed);
 * returns whether every part was allocated.  Free with cg_topk_scratch_free. */
static int CG_FN(cg_topk_scratch_init)(CG_FN(cg_topk_scratch) *s, int64_t L, int64_t k,
                                       int *failed)
{
    int64_t M;
    s->kk = k < L ? k : L;
    /* M = max(2 kk, 62) + 1 groups (at least 63 lanes for the vectorised maxima) when
     * that leaves several entries per group; odd, so that the entries l = j mod M of a
     * group are spread over the rows of a grid whose width is a power of two instead of
     * stacked in one column (a posterior's bump then raises few group maxima, and tau
     * falls far below v*).  Otherwise every entry is a candidate and the M lanes only
     * check the entries. */
    s->grouped = 4 * s->kk <= L;
    M = s->grouped ? (2 * s->kk > 62 ? 2 * s->kk : 62) + 1 : 64;
    s->M = M < L ? M : L;
    s->gmax = (REAL *)cg_thread_scratch((size_t)s->M * sizeof(REAL), failed);
    s->cv = (REAL *)cg_thread_scratch((size_t)L * sizeof(REAL), failed);
    s->sel = (REAL *)cg_thread_scratch((size_t)L * sizeof(REAL), failed);
    s->cp = (int32_t *)cg_thread_scratch((size_t)L * sizeof(int32_t), failed);
    s->hv = (REAL *)cg_thread_scratch((size_t)s->kk * sizeof(REAL), failed);
    s->hp = (int64_t *)cg_thread_scratch((size_t)s->kk * sizeof(int64_t), failed);
    return s->gmax && s->cv && s->sel && s->cp && s->hv && s->hp;
}

static void CG_FN(cg_topk_scratch_free)(CG_FN(cg_topk_scratch) *s)
{
    free(s->gmax);
    free(s->cv);
    free(s->sel);
    free(s->cp);
    free(s->hv);
    free(s->hp);
}

/* The kk largest entries of one row (see cg_grid_topk_posterior) into it / vt; returns 0,
 * or 1 for a row with a negative, infinite or NaN entry or no positive entry. */
static int CG_FN(cg_topk_row)(const REAL *CG_RESTRICT row, int64_t L,
                              CG_FN(cg_topk_scratch) *s, int32_t *CG_RESTRICT it,
                              REAL *CG_RESTRICT vt)
{
    const int64_t kk = s->kk, M = s->M;
    REAL *CG_RESTRICT gmax = s->gmax, *CG_RESTRICT cv = s->cv;
    int32_t *CG_RESTRICT cp = s->cp;
    const REAL inf = (REAL)INFINITY;
    REAL tau = 0, vstar;
    int64_t l, j, n, above, need, eq;
    int invalid = 0;
    double sum = 0.0;
    /* (1) group maxima; a negative, infinite or NaN entry makes its lane inf */
    for (j = 0; j < M; j++) {
        const REAL x = row[j];
        gmax[j] = (x >= 0) & (x < inf) ? x : inf;
    }
    for (l = M; l < L; l += M) {
        const int64_t lim = L - l < M ? L - l : M;
        const REAL *CG_RESTRICT chunk = row + l;
        for (j = 0; j < lim; j++) {
            const REAL x = chunk[j];
            const REAL v = (x >= 0) & (x < inf) ? x : inf;
            gmax[j] = v > gmax[j] ? v : gmax[j];
        }
    }
    for (j = 0; j < M; j++)
        invalid |= gmax[j] == inf;
    if (invalid)
        return 1;
    if (kk == L) {
        for (l = 0; l < L; l++) {
            cp[l] = (int32_t)l;
            cv[l] = row[l];
        }
    } else {
        if (s->grouped)
            tau = CG_FN(cg_topk_select)(gmax, M, kk, s->hv, s->hp);
        for (l = 0, above = 0; l < L; l++)     /* vectorised */
            above += row[l] > tau;
        if (above < kk) {
            /* (2') fewer than kk entries above tau make v* = tau, with no selection: the
             * usual case of a concentrated posterior, whose bump raises fewer than kk
             * group maxima above the floor that most entries equal.  The kept entries
             * are written in one pass; once the ties needed are taken, blocks of 16
             * entries none of which is above tau are skipped after a vectorised test */
            need = kk - above;
            for (l = 0, j = 0; l < L; l += 16) {
                const int64_t end = l + 16 < L ? l + 16 : L;
                int64_t i;
                CG_TOPK_MASK any = 0;
                if (need == 0 && end - l == 16) {
                    for (i = 0; i < 16; i++)
                        any |= (CG_TOPK_MASK)(row[l + i] > tau);
                    if (!any)
                        continue;
                }
                for (i = l; i < end; i++) {
                    const REAL x = row[i];
                    const int64_t take = (x == tau) & (need > 0);
                    cv[j] = x;
                    cp[j] = (int32_t)i;
                    j += (x > tau) | take;
                    need -= take;
                }
            }
        } else {
            /* (2) candidates, branch-free (cv and cp have room for all L), skipping
             * blocks of 16 entries below tau after a vectorised test */
            for (l = 0, n = 0; l < L; l += 16) {
                const int64_t end = l + 16 < L ? l + 16 : L;
                int64_t i;
                CG_TOPK_MASK any = 0;
                if (end - l == 16) {
                    for (i = 0; i < 16; i++)
                        any |= (CG_TOPK_MASK)(row[l + i] >= tau);
                    if (!any)
                        continue;
                }
                for (i = l; i < end; i++) {
                    const REAL x = row[i];
                    cv[n] = x;
                    cp[n] = (int32_t)i;
                    n += x >= tau;
                }
            }
            /* (3) v*, and how many entries equal to v* are kept */
            memcpy(s->sel, cv, (size_t)n * sizeof(REAL));
            vstar = CG_FN(cg_topk_select)(s->sel, n, kk, s->hv, s->hp);
            for (l = 0, above = 0; l < n; l++)
                above += cv[l] > vstar;
            need = kk - above;
            /* (4) compaction to the kept entries, in position order */
            for (l = 0, j = 0, eq = 0; l < n; l++) {
                const REAL v = cv[l];
                const int is_eq = v == vstar;
                const int keep = (v > vstar) | (is_eq & (eq < need));
                eq += is_eq;
                cv[j] = v;
                cp[j] = cp[l];
                j += keep;
            }
        }
        if (j != kk)                            /* impossible: tau <= v* */
            return 1;
    }
    for (j = 0; j < kk; j++)
        sum += (double)cv[j];
    if (!(sum > 0.0))
        return 1;                               /* no positive entry: nothing to normalise */
    for (j = 0; j < kk; j++)
        it[j] = cp[j];
    if (sum <= DBL_MAX) {
        for (j = 0; j < kk; j++)
            vt[j] = (REAL)((double)cv[j] / sum);
    } else {
        /* double rows near DBL_MAX: normalise by the largest kept entry first */
        double mx = 0.0, s2 = 0.0;
        for (j = 0; j < kk; j++)
            mx = (double)cv[j] > mx ? (double)cv[j] : mx;
        for (j = 0; j < kk; j++)
            s2 += (double)cv[j] / mx;
        for (j = 0; j < kk; j++)
            vt[j] = (REAL)((double)cv[j] / mx / s2);
    }
    return 0;
}

int CG_FN(cg_grid_topk_posterior)(int64_t n_rows, int64_t L, const REAL *q, int64_t ld_q,
                                  int64_t k, int32_t *idx, int64_t ld_idx, REAL *val,
                                  int64_t ld_val, int num_threads)
{
    int64_t kk;
    int bad = 0, failed = 0;
    if (n_rows < 0 || L < 1 || L > INT32_MAX || ld_q < L || k < 1)
        return CG_ERR_ARGUMENT;
    kk = k < L ? k : L;
    if (ld_idx < kk || ld_val < kk)
        return CG_ERR_ARGUMENT;
    if (n_rows == 0)
        return CG_OK;
    if (q == NULL || idx == NULL || val == NULL)
        return CG_ERR_ARGUMENT;
    #pragma omp parallel num_threads(cg_resolve_threads(num_threads))
    {
        CG_FN(cg_topk_scratch) s;
        const int ok_scratch = CG_FN(cg_topk_scratch_init)(&s, L, k, &failed);
        int64_t t;
        #pragma omp for schedule(static)
        for (t = 0; t < n_rows; t++) {
            if (!ok_scratch)
                continue;                       /* failed is raised */
            if (CG_FN(cg_topk_row)(q + t * ld_q, L, &s, idx + t * ld_idx, val + t * ld_val))
                cg_raise(&bad);
        }
        CG_FN(cg_topk_scratch_free)(&s);
    }
    if (failed)
        return CG_ERR_ALLOC;
    return bad ? CG_ERR_ARGUMENT : CG_OK;
}
