import numpy as np, warnings
warnings.filterwarnings("ignore")
from diffprivlib.models import LogisticRegression, PCA, StandardScaler
rng = np.random.default_rng(0)
X = rng.normal(size=(200, 3)); y = (X[:, 0] > 0).astype(int)
# Clipping: a row far outside the declared norm/bounds gives the same release as the same row pre-clipped
Xb = X.copy(); Xb[0] = [100., -50., 30.]
Xc = X.copy(); Xc[0] = Xb[0] / np.linalg.norm(Xb[0]) * 2.0
a = LogisticRegression(epsilon=1, data_norm=2.0, random_state=1).fit(Xb, y).coef_
b = LogisticRegression(epsilon=1, data_norm=2.0, random_state=1).fit(Xc, y).coef_
print("LR: outlier row clipped to data_norm (identical release):", np.allclose(a, b))
s1 = StandardScaler(epsilon=1, bounds=(-3, 3), random_state=1).fit(Xb)
Xs = np.clip(Xb, -3, 3)
s2 = StandardScaler(epsilon=1, bounds=(-3, 3), random_state=1).fit(Xs)
print("StandardScaler: clipped to bounds (identical release):", np.allclose(s1.mean_, s2.mean_) and np.allclose(s1.var_, s2.var_))
p1 = PCA(2, epsilon=1, data_norm=4.0, bounds=(-3, 3), random_state=1).fit(Xb.copy())
Xp = Xb.copy()
# PCA: mean clips per feature to bounds internally; covariance clips centred rows to data_norm
Xcheck = Xb.copy()
p = PCA(2, epsilon=1, data_norm=4.0, bounds=(-3, 3), random_state=1)
before = Xcheck.copy(); p.fit(Xcheck)
print("PCA.fit mutated caller's X in place (X -= mean_):", not np.array_equal(before, Xcheck),
      "| max change", np.abs(before - Xcheck).max().round(4), "| mean_", p.mean_.round(3))
Xt = X.copy(); p2 = PCA(2, epsilon=1, data_norm=4.0, bounds=(-3, 3), random_state=1)
T = p2.fit_transform(Xt)
print("fit_transform(X) == transform(original X)?", np.allclose(T, p2.transform(X)),
      "| max diff", np.abs(T - p2.transform(X)).max().round(4))
