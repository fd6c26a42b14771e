# Check in d=5 that diffprivlib's Bingham draws from exp(-z)(1+2z/b)^{-d}, not exp(-z).
import numpy as np
from diffprivlib.mechanisms import Bingham
d, eps = 5, 1.0
c = np.array([11.63, 5.79, 4.61, 6.63, 18.48])
mech = Bingham(epsilon=eps, random_state=3)
S = np.array([mech.randomise(np.diag(c)) for _ in range(30000)])
A = eps / 4 * (c.max() - c)
lo, hi = 1.0, float(d)
for _ in range(100):
    mid = (lo + hi) / 2; f = np.sum(1 / (mid + 2 * A))
    if f <= 1: hi = mid
    if f >= 1: lo = mid
b = (lo + hi) / 2
X = np.random.default_rng(9).standard_normal((2000000, d)); X /= np.linalg.norm(X, axis=1, keepdims=True)
z = (X ** 2) @ A
for name, w in [("Bingham exp(-z)", np.exp(-z)), ("exp(-z)(1+2z/b)^-d", np.exp(-z) * (1 + 2 * z / b) ** (-d))]:
    w = w / w.sum()
    print(f"{name:22s} predicted E[x_i^2] = {np.round(w @ X**2, 4)}")
print(f"{'diffprivlib empirical':22s}           = {np.round((S**2).mean(0), 4)}  (n=30000, se ~{np.round((S**2).std(0)/np.sqrt(len(S)),4).max()})")
