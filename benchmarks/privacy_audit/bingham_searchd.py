import numpy as np, sys
rng = np.random.default_rng(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
def bconst(eigs, d):
    lo, hi = 1.0, float(d)
    for _ in range(100):
        mid = (lo + hi) / 2; f = np.sum(1 / (mid + 2 * eigs))
        if f <= 1: hi = mid
        if f >= 1: lo = mid
    return (lo + hi) / 2
def maxloss(eps, c1, c2, d, X, N):
    out = {}
    for actual in (False, True):
        lps = []
        for c in (c1, c2):
            A = eps / 4 * (c.max() - c); z = (X ** 2) @ A
            lp = -z - (d * np.log1p(2 * z / bconst(A, d)) if actual else 0)
            m = lp[:N].max(); lps.append(lp - m - np.log(np.mean(np.exp(lp[:N] - m))))
        out[actual] = np.max(np.abs(lps[0] - lps[1]))
    return out
N = 200000
for d in [5, 10]:
    X = rng.standard_normal((N, d)); X /= np.linalg.norm(X, axis=1, keepdims=True); X = np.vstack([X, np.eye(d)])
    for eps in [1.0, 2.0]:
        best = (0, None)
        for t in range(150):
            c = rng.uniform(0, rng.choice([2, 5, 10, 20]) / eps, d); c[0] += 1
            c2 = c.copy(); c2[0] -= 1; c2[rng.integers(1, d)] += 1
            r = maxloss(eps, c, c2, d, X, N)
            if r[True] > best[0]: best = (r[True], r[False], np.round(c, 2))
        print(f"d={d} eps_i={eps}: worst actual {best[0]:.3f} ({best[0]/eps:.2f} eps_i), intended there {best[1]:.3f}; C diag {best[2]}")
