# Does diffprivlib's Bingham sampler draw from exp(-x'Ax) (the Bingham / exponential mechanism)?
import numpy as np
from scipy import integrate
from diffprivlib.mechanisms import Bingham

def b_const(a_eigs, q):
    # same bisection as diffprivlib: sum 1/(b+2 lam) = 1
    lo, hi = 1.0, float(q)
    for _ in range(200):
        mid = (lo + hi) / 2
        f = sum(1 / (mid + 2 * e) for e in a_eigs)
        if f <= 1: hi = mid
        if f >= 1: lo = mid
    return (lo + hi) / 2

for lam_gap, eps in [(2.0, 4.0), (20.0, 4.0), (200.0, 1.0)]:
    C = np.diag([lam_gap, 0.0])           # "cov" (already divided by norm^2)
    mech = Bingham(epsilon=eps, random_state=0)
    N = 100000
    s2 = np.empty(N)
    for i in range(N):
        u = mech.randomise(C)
        s2[i] = u[1] ** 2                   # sin^2(phi), phi = angle to top eigvec
    a = eps * lam_gap / 4                  # A = eps/4 (lam_max I - C) = diag(0, a)
    b = b_const([0.0, a], 2)
    # densities on the circle in phi (uniform base measure)
    bing = lambda p: np.exp(-a * np.sin(p) ** 2)
    buggy = lambda p: np.exp(-a * np.sin(p) ** 2) * (1 + 2 * a * np.sin(p) ** 2 / b) ** (-2)
    def prob_s2_below(dens, t):
        pt = np.arcsin(np.sqrt(t))
        num = integrate.quad(dens, 0, pt, limit=200)[0]
        den = integrate.quad(dens, 0, np.pi / 2, limit=200)[0]
        return num / den
    print(f"gap={lam_gap} eps={eps}  a={a:.2f} b={b:.4f}")
    for t in [0.01, 0.05, 0.1, 0.3]:
        print(f"  P(sin^2<{t}): empirical {np.mean(s2 < t):.4f} | Bingham exp(-z) {prob_s2_below(bing, t):.4f}"
              f" | exp(-z)(x'Wx)^-q {prob_s2_below(buggy, t):.4f}")
    print(f"  E[sin^2]: empirical {s2.mean():.4f}")
