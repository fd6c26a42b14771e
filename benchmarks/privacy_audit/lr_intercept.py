# diffprivlib LogisticRegression with fit_intercept=True: the intercept is not regularised
# (sklearn LinearModelLoss.l2_penalty excludes it), so the objective is not strongly convex in the
# intercept direction, which CMS11's proof needs.  Exact output density via change of variables,
# plus Monte Carlo with the real diffprivlib code.  1 feature, data_norm=1, n=10, C=1, eps=1.
# Rows: 8 x (x=0,y=1), 1 x (x=0,y=0) common; D adds (x=-1, y=0), D' adds (x=+1, y=1).
import sys, time, numpy as np
from diffprivlib.models.logistic_regression import _logistic_regression_path
dn, n, C, eps = 1.0, 10, 1.0, 1.0
R = np.sqrt(dn**2 + 1); c = 0.25; alpha = 1 / C
eps_p = eps - 2 * np.log(1 + c * R / alpha); Delta = 0.0
if eps_p <= 0:
    Delta = (c * R / np.expm1(eps / 4) - alpha) / n; eps_p = eps / 2
scale = 2 * R / eps_p
print(f"diffprivlib: R={R:.3f} eps_p={eps_p:.3f} Delta={Delta} scale={scale:.3f}")
common_x = np.zeros(9); common_y = np.r_[np.ones(8), 0.0]
sig = lambda t: 1 / (1 + np.exp(-t))
def logdens(W, B0, xd, yd):
    xs = np.r_[common_x, xd]; ys = np.r_[common_y, yd]
    g = np.zeros(W.shape + (2,)); H = np.zeros(W.shape + (2, 2))
    for x, y in zip(xs, ys):
        z = W * x + B0; s = sig(z); xt = np.array([x, 1.0])
        g += (s - y)[..., None] * xt
        H += (s * (1 - s))[..., None, None] * np.outer(xt, xt)
    g[..., 0] += alpha * W
    H[..., 0, 0] += alpha
    g += n * Delta * np.stack([W, B0], -1); H += n * Delta * np.eye(2)
    b = -g
    det = H[..., 0, 0] * H[..., 1, 1] - H[..., 0, 1] ** 2
    return -np.linalg.norm(b, axis=-1) / scale - np.log(2 * np.pi * scale**2) + np.log(det)
for (w0, b0) in [(0, 0), (3, 3), (6, 6), (8, 8), (10, 10)]:
    L = logdens(np.array(w0, float), np.array(b0, float), -1.0, 0.0) - logdens(np.array(w0, float), np.array(b0, float), 1.0, 1.0)
    print(f"  log p(theta|D)/p(theta|D') at (w,b0)=({w0},{b0}): {L:.3f}")
# box probabilities
box = (4.5, 7.5, 4.5, 7.5)
ws = np.linspace(box[0], box[1], 601); bs = np.linspace(box[2], box[3], 601)
W, B = np.meshgrid(ws, bs, indexing="ij")
PD = np.trapezoid(np.trapezoid(np.exp(logdens(W, B, -1.0, 0.0)), bs), ws)
PD2 = np.trapezoid(np.trapezoid(np.exp(logdens(W, B, 1.0, 1.0)), bs), ws)
print(f"exact P(theta in box {box}): D {PD:.5f}  D' {PD2:.6f}  ratio {PD/PD2:.2f}  (e^eps = {np.e**eps:.3f})")
if len(sys.argv) > 1:
    N = int(sys.argv[1]); rng = np.random.RandomState(7); hits = []; t = time.time()
    for xd, yd in ((-1.0, 0.0), (1.0, 1.0)):
        X = np.r_[common_x, xd][:, None]; y = np.r_[common_y, yd]; cnt = 0
        for k in range(N):
            co, _, _ = _logistic_regression_path(X, y, epsilon=eps, data_norm=dn, pos_class=1.0, Cs=[C],
                                                 fit_intercept=True, random_state=rng, check_input=False)
            wv, bv = co[0]
            cnt += (box[0] < wv < box[1]) and (box[2] < bv < box[3])
        hits.append(cnt)
    p1, p2 = hits[0] / N, hits[1] / N
    print(f"Monte Carlo ({N} fits each, real diffprivlib code): hits D={hits[0]} D'={hits[1]} "
          f"ratio={p1/max(p2,1e-12):.2f} [{time.time()-t:.0f}s]")
