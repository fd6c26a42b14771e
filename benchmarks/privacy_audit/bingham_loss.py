# Exact privacy loss of the distribution diffprivlib's Bingham sampler actually draws from,
# density on S^{d-1} ∝ exp(-x'Ax) (x'Ωx)^{-d}, versus the intended Bingham ∝ exp(-x'Ax).
# Neighbours: C = diag(g, h, ..., h) (normalised by data_norm^2) and C' = C - e1 e1^T
# (one row e1*data_norm replaced by a zero row).  A = eps/4 (lam_max I - C) = diag(0, a, ..., a).
import numpy as np
from scipy import integrate, special

def bconst(a, d):
    lo, hi = 1.0, float(d)
    for _ in range(200):
        mid = (lo + hi) / 2
        f = 1 / mid + (d - 1) / (mid + 2 * a)
        if f <= 1: hi = mid
        if f >= 1: lo = mid
    return (lo + hi) / 2

def logdens(a, d, t, actual):
    z = a * (1 - t)
    out = -z
    if actual:
        out = out - d * np.log1p(2 * z / bconst(a, d))
    return out

def lognorm(a, d, actual):
    # E over uniform sphere; t = x1^2 ~ Beta(1/2, (d-1)/2)
    beta = lambda t: t ** (-0.5) * (1 - t) ** ((d - 3) / 2) / special.beta(0.5, (d - 1) / 2)
    f = lambda t: np.exp(logdens(a, d, t, actual)) * beta(t)
    pts = [1 - 1 / max(a, 1), 1 - 0.1 / max(a, 1)]
    return np.log(integrate.quad(f, 0, 1, points=pts, limit=500)[0])

ts = np.concatenate([np.linspace(0, 1, 20001)])
print("eps_i   d   gap(g-h)  a      maxloss_intended  maxloss_actual")
for eps in [0.5, 1.0, 2.0]:
    for d in [2, 5, 10]:
        for gap in [2.0, 10.0, 100.0, 1000.0]:
            a, a2 = eps / 4 * gap, eps / 4 * (gap - 1)
            res = []
            for actual in (False, True):
                L = (logdens(a, d, ts, actual) - lognorm(a, d, actual)) - \
                    (logdens(a2, d, ts, actual) - lognorm(a2, d, actual))
                res.append(np.max(np.abs(L)))
            print(f"{eps:5}  {d:3}  {gap:7}  {a:7.2f}   {res[0]:.4f}           {res[1]:.4f}")
