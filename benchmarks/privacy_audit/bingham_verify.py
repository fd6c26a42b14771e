# Re-verify the worst d=5 case with independent, larger Monte Carlo for the normalisers.
import numpy as np
from itertools import product
def bconst(eigs, d):
    lo, hi = 1.0, float(d)
    for _ in range(100):
        mid = (lo + hi) / 2; f = np.sum(1 / (mid + 2 * eigs))
        if f <= 1: hi = mid
        if f >= 1: lo = mid
    return (lo + hi) / 2
def logK(eps, c, d, actual, seeds=5, N=1000000):
    A = eps / 4 * (c.max() - c); b = bconst(A, d); vals = []
    for s in range(seeds):
        X = np.random.default_rng(100 + s).standard_normal((N, d)); X /= np.linalg.norm(X, axis=1, keepdims=True)
        z = (X ** 2) @ A; lp = -z - (d * np.log1p(2 * z / b) if actual else 0)
        vals.append(np.log(np.mean(np.exp(lp))))
    return np.mean(vals), np.std(vals)
def logdens_unnorm(eps, c, d, x, actual):
    A = eps / 4 * (c.max() - c); z = (x ** 2) @ A
    return -z - (d * np.log1p(2 * z / bconst(A, d)) if actual else 0)
d, eps = 5, 1.0
c = np.array([11.63, 5.79, 4.61, 6.63, 18.48])
best = None
for j in range(1, d):
    c2 = c.copy(); c2[0] -= 1; c2[j] += 1
    for actual in (True, False):
        K1, s1 = logK(eps, c, d, actual); K2, s2 = logK(eps, c2, d, actual)
        # candidate outputs: coordinate axes (sup of |diff| for diagonal case is attained on axes or MC pts)
        E = np.eye(d)
        L = (logdens_unnorm(eps, c, d, E, actual) - K1) - (logdens_unnorm(eps, c2, d, E, actual) - K2)
        print(f"swap e1->e{j+1} {'actual  ' if actual else 'intended'}: max |loss| on axes = {np.max(np.abs(L)):.3f} (MC sd of logK ~{max(s1,s2):.4f}) at axis {np.argmax(np.abs(L))+1}")
