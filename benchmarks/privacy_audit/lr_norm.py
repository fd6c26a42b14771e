# diffprivlib LogisticRegression, fit_intercept=False, 1 feature, data_norm=R.
# Exact output density of objective perturbation (CMS11 change of variables), and a Monte Carlo
# check with the real diffprivlib code.  Neighbours (replace-one): D has a row (x=R, y=1), D' has
# (x=0, y=1) instead; the other n-1 rows are x=0 (they add nothing to gradient or Hessian).
import sys, time, numpy as np
from diffprivlib.models.logistic_regression import _logistic_regression_path

R, n, C, eps = 10.0, 20, 1.0, 1.0
c, alpha = 0.25, 1.0 / C
# --- what diffprivlib's Vector.randomise computes (mechanisms/vector.py:149-157)
eps_p = eps - 2 * np.log(1 + c * R / alpha); Delta = 0.0
if eps_p <= 0:
    Delta = (c * R / np.expm1(eps / 4) - alpha) / n; eps_p = eps / 2
scale = 2 * R / eps_p
print(f"diffprivlib: eps_p={eps_p:.3f} Delta={Delta:.4f} scale={scale:.2f}")
# --- what CMS11 Thm 9 needs with ||x||<=R (Hessian term scales with R^2)
eps_p2 = eps - 2 * np.log(1 + c * R**2 / alpha); Delta2 = 0.0
if eps_p2 <= 0:
    Delta2 = (c * R**2 / np.expm1(eps / 4) - alpha) / n; eps_p2 = eps / 2
print(f"with R^2   : eps_p={eps_p2:.3f} Delta={Delta2:.4f} scale={2*R/eps_p2:.2f}")

sig = lambda t: 1 / (1 + np.exp(-t))
def logdens(w, xdiff):
    # n*grad = sum (sig(w x_i) - y_i) x_i + (alpha + n Delta) w + b = 0  => b(w)
    reg = alpha + n * Delta
    b = -((sig(w * xdiff) - 1.0) * xdiff + reg * w)
    jac = sig(w * xdiff) * (1 - sig(w * xdiff)) * xdiff**2 + reg
    return -np.abs(b) / scale - np.log(2 * scale) + np.log(jac)
w = np.linspace(-2, 2, 400001)
L = logdens(w, R) - logdens(w, 0.0)
i = np.argmax(L)
print(f"exact sup_w log p(w|D)/p(w|D') = {L[i]:.3f} at w={w[i]:.4f}   (epsilon charged = {eps})")
lo_, hi_ = -0.05, 0.05
m = (w > lo_) & (w < hi_)
PD, PD2 = np.trapezoid(np.exp(logdens(w[m], R)), w[m]), np.trapezoid(np.exp(logdens(w[m], 0.0)), w[m])
print(f"exact P(w in ({lo_},{hi_})): D {PD:.5f}  D' {PD2:.5f}  ratio {PD/PD2:.3f}  (e^eps = {np.e**eps:.3f})")

if len(sys.argv) > 1:
    N = int(sys.argv[1]); rng = np.random.RandomState(12345)
    X_D = np.zeros((n, 1)); X_D[0, 0] = R
    X_D2 = np.zeros((n, 1))
    y = np.zeros(n); y[0] = 1.0
    t = time.time(); hits = []
    for X in (X_D, X_D2):
        cnt = 0
        for k in range(N):
            coefs, _, _ = _logistic_regression_path(X, y, epsilon=eps, data_norm=R, pos_class=1.0, Cs=[C],
                                                    fit_intercept=False, random_state=rng, check_input=False)
            cnt += lo_ < coefs[0, 0] < hi_
        hits.append(cnt)
    p1, p2 = hits[0] / N, hits[1] / N
    se = np.sqrt(1 / max(hits[0], 1) + 1 / max(hits[1], 1))
    print(f"Monte Carlo ({N} fits each, real diffprivlib code): P_D={p1:.5f} P_D'={p2:.5f} ratio={p1/p2:.3f} "
          f"(log ratio {np.log(p1/p2):.3f} +- {1.96*se:.3f} 95%)  [{time.time()-t:.0f}s]")
