# d=2, exact on a fine circle grid: search neighbouring C, C' = C - uu' + vv' (|u|,|v|<=1)
# for the largest privacy loss of diffprivlib's actual sampler, per unit eps_i.
import numpy as np
rng = np.random.default_rng(0)
phi = np.linspace(0, np.pi, 200001)[:-1]
X = np.stack([np.cos(phi), np.sin(phi)], 1)

def logdens(C, eps, actual):
    w, V = np.linalg.eigh(C)
    A = eps / 4 * (w.max() * np.eye(2) - C)
    aw = np.linalg.eigvalsh(A)
    lo, hi = 1.0, 2.0
    for _ in range(100):
        mid = (lo + hi) / 2; f = np.sum(1 / (mid + 2 * aw))
        if f <= 1: hi = mid
        if f >= 1: lo = mid
    b = (lo + hi) / 2
    z = np.einsum('ij,jk,ik->i', X, A, X)
    lp = -z - (2 * np.log1p(2 * z / b) if actual else 0)
    m = lp.max()
    return lp - (m + np.log(np.mean(np.exp(lp - m))))

for eps in [0.5, 1.0, 2.0]:
    best = (0, None); besti = 0
    for trial in range(3000):
        th = rng.uniform(0, np.pi); u = np.array([np.cos(th), np.sin(th)]) * rng.uniform(0.5, 1)
        th2 = rng.uniform(0, np.pi); v = np.array([np.cos(th2), np.sin(th2)]) * rng.uniform(0.5, 1)
        # base: PSD matrix with eigenvalues up to ~15/eps
        R = np.linalg.qr(rng.standard_normal((2, 2)))[0]
        ev = rng.uniform(0, 12 / eps, 2)
        C = R @ np.diag(ev) @ R.T + np.outer(u, u)
        C2 = C - np.outer(u, u) + np.outer(v, v)
        L = np.max(np.abs(logdens(C, eps, True) - logdens(C2, eps, True)))
        Li = np.max(np.abs(logdens(C, eps, False) - logdens(C2, eps, False)))
        besti = max(besti, Li)
        if L > best[0]: best = (L, (ev, u, v))
    print(f"eps_i={eps}: max loss actual sampler {best[0]:.3f} ({best[0]/eps:.2f} eps_i); intended Bingham {besti:.3f} ({besti/eps:.2f} eps_i)")
