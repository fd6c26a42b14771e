"""GaussianNB, bounds (100,101) not containing 0: one record relabelled (replace-one).
D : 16 records of class 0 and 16 of class 1, all x = 100.5.
D': the same with one class-0 record relabelled 1 (x unchanged).
Event E: class_count_[0] == 16 and theta_[0,0] == 100.0 (sum clamped at its lower end).
epsilon = 1.5 recorded; DP would need P_D'(E) <= e^1.5 P_D(E) = 4.48 P_D(E)."""
import sys, time, warnings
import numpy as np
from diffprivlib.models import GaussianNB
from diffprivlib.accountant import BudgetAccountant
from scipy.stats import beta
N = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
eps = 1.5
X = np.full((32, 1), 100.5)
y = np.array([0]*16 + [1]*16); y2 = y.copy(); y2[0] = 1
acc = BudgetAccountant()
def run(yy, seed0):
    hits = 0
    for s in range(N):
        m = GaussianNB(epsilon=eps, bounds=(100, 101), accountant=acc).fit(X, yy)
        if m.class_count_[0] == 16 and m.theta_[0, 0] == 100.0:
            hits += 1
    return hits
def cp(k, n, a=0.05):
    return (beta.ppf(a/2, k, n-k+1) if k else 0.0, beta.ppf(1-a/2, k+1, n-k) if k < n else 1.0)
t = time.time()
kD = run(y, 0); kD2 = run(y2, 1)
lo1, hi1 = cp(kD, N); lo2, hi2 = cp(kD2, N)
print(f"N={N} per world, {time.time()-t:.0f}s")
print(f"P_D(E)  = {kD/N:.5f}  95% CI [{lo1:.5f}, {hi1:.5f}]")
print(f"P_D'(E) = {kD2/N:.5f}  95% CI [{lo2:.5f}, {hi2:.5f}]")
print(f"ratio = {kD2/max(kD,1):.1f}; conservative lower bound {lo2/hi1:.1f}; allowed e^eps = {np.exp(eps):.2f}")
print(f"=> empirical epsilon >= {np.log(lo2/hi1):.2f} (recorded {eps})")
