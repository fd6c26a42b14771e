"""KMeans: (a) the epsilons diffprivlib actually gives its mechanisms vs. skdptune.gate.kmeans_overspend;
(b) labels_ / inertia_ left on the fitted (released) model are exact functions of the private rows."""
import warnings
import numpy as np
import diffprivlib.models.k_means as km
from diffprivlib.models import KMeans
from diffprivlib.accountant import BudgetAccountant
from skdptune.gate import kmeans_overspend
warnings.simplefilter("ignore")
log = []
class G(km.GeometricFolded):
    def __init__(self, **kw): log.append(("count", kw["epsilon"], kw["sensitivity"])); super().__init__(**kw)
class L(km.LaplaceBoundedDomain):
    def __init__(self, **kw): log.append(("sum", kw["epsilon"], kw["sensitivity"])); super().__init__(**kw)
km.GeometricFolded, km.LaplaceBoundedDomain = G, L
rng = np.random.default_rng(1)
print("(a) d, iters, per-cluster spend (count eps + sum of per-dim eps) * iters / epsilon, kmeans_overspend(d)")
for d in (1, 2, 4, 5, 10, 50):
    X = rng.random((2000, d)); log.clear()
    m = KMeans(n_clusters=3, epsilon=1.0, bounds=(np.zeros(d), np.ones(d)), accountant=BudgetAccountant()).fit(X)
    per_iter = {}
    # one GeometricFolded per iteration, then d LaplaceBoundedDomain per non-empty cluster
    it = -1; first = {}
    for kind, e, s in log:
        if kind == "count": it += 1; per_iter[it] = [e, 0.0, 0]
        elif per_iter[it][2] < d: per_iter[it][1] += e; per_iter[it][2] += 1
    total = sum(c + s for c, s, _ in per_iter.values())
    print(f"  d={d:2d} iters={m.n_iter_} spent/eps={total:.4f} overspend={kmeans_overspend(d):.4f}")
km.GeometricFolded, km.LaplaceBoundedDomain = G.__bases__[0], L.__bases__[0]
# (b) labels_ and inertia_
X = rng.random((200, 2)); X2 = X.copy(); X2[0] = [0.99, 0.99]
m = KMeans(n_clusters=3, epsilon=1.0, bounds=([0, 0], [1, 1]), accountant=BudgetAccountant()).fit(X)
def inertia(Z, C): return ((Z[:, None, :] - C[None]) ** 2).sum(-1).min(1).sum()
print("(b) released attributes:", [a for a in ("cluster_centers_", "labels_", "inertia_") if hasattr(m, a)], "len(labels_)=", len(m.labels_))
print("    inertia_ =", m.inertia_, " recomputed from X and released centres:", inertia(X, m.cluster_centers_),
      " from neighbour X':", inertia(X2, m.cluster_centers_))
ok = 0
for t in range(200):
    truth = t % 2
    Z = X2 if truth else X
    mm = KMeans(n_clusters=3, epsilon=1.0, bounds=([0, 0], [1, 1]), accountant=BudgetAccountant()).fit(Z)
    guess = int(abs(inertia(X2, mm.cluster_centers_) - mm.inertia_) < abs(inertia(X, mm.cluster_centers_) - mm.inertia_))
    ok += guess == truth
print(f"    adversary telling X from X' (one row replaced) using inertia_: {ok}/200 correct")
