# Privacy loss, swap neighbour: C = diag(g, h, ..., h), C' = C - e1e1' + e2e2' (row e1 replaced by e2,
# both of norm data_norm). Actual diffprivlib density ∝ exp(-x'Ax)(1 + 2x'Ax/b)^{-d}; intended ∝ exp(-x'Ax).
import numpy as np
rng = np.random.default_rng(1)

def bconst(eigs, d):
    lo, hi = 1.0, float(d)
    for _ in range(200):
        mid = (lo + hi) / 2
        f = np.sum(1 / (mid + 2 * eigs))
        if f <= 1: hi = mid
        if f >= 1: lo = mid
    return (lo + hi) / 2

def loss(eps, Cdiag, C2diag, d, N=400000):
    X = rng.standard_normal((N, d)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    X = np.vstack([X, np.eye(d)])
    out = {}
    for actual in (False, True):
        logp = []
        for c in (Cdiag, C2diag):
            A = eps / 4 * (c.max() - c)
            z = (X ** 2) @ A
            lp = -z
            if actual:
                lp = lp - d * np.log1p(2 * z / bconst(A, d))
            m = lp[:N].max()
            logK = m + np.log(np.mean(np.exp(lp[:N] - m)))
            logp.append(lp - logK)
        out[actual] = np.max(np.abs(logp[0] - logp[1]))
    return out

print("eps_i  d  g-h   intended  actual")
for eps in [1.0, 2.0, 4.0]:
    for d in [2, 5, 10, 30]:
        for gap in [1.0, 2.0, 3.0, 6.0]:
            h = 5.0
            C = np.full(d, h); C[0] = h + gap
            C2 = C.copy(); C2[0] -= 1; C2[1] += 1
            r = loss(eps, C, C2, d)
            flag = "  <-- exceeds eps_i" if r[True] > eps else ""
            print(f"{eps:4} {d:3} {gap:4}   {r[False]:.3f}     {r[True]:.3f}{flag}")
