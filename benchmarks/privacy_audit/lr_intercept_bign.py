# Same exact computation as lr_intercept.py with n=1000 (999 common rows at x=0: 800 y=1, 199 y=0).
import numpy as np
dn, n, C, eps = 1.0, 1000, 1.0, 1.0
R = np.sqrt(dn**2 + 1); c = 0.25; alpha = 1 / C
eps_p = eps - 2 * np.log(1 + c * R / alpha); scale = 2 * R / eps_p
sig = lambda t: 1 / (1 + np.exp(-t))
def logdens(w, b0, xd, yd):
    rows = [(0.0, 1.0, 800), (0.0, 0.0, 199), (xd, yd, 1)]
    g = np.zeros(2); H = np.zeros((2, 2))
    for x, y, k in rows:
        z = w * x + b0; s = sig(z); xt = np.array([x, 1.0])
        g += k * (s - y) * xt; H += k * s * (1 - s) * np.outer(xt, xt)
    g[0] += alpha * w; H[0, 0] += alpha
    return -np.linalg.norm(g) / scale + np.log(np.linalg.det(H))
for B in [4, 8, 12, 16, 20]:
    print(f"n=1000 (w,b0)=({B},{B}): log p(theta|D)/p(theta|D') = {logdens(B, B, -1.0, 0.0) - logdens(B, B, 1.0, 1.0):.2f}  (eps={eps})")
