"""DecisionTreeClassifier / RandomForestClassifier: one record relabelled inside a leaf (replace-one).
All x = 0.5, so every record falls in the same leaf.  D: 6 of class 0, 5 of class 1;
D': one class-0 record relabelled 1 -> 5 of class 0, 6 of class 1.
PermuteAndFlip(monotonic=True) with 2 candidates: P(pick 1 | D) = e^-eps/2, P(pick 1 | D') = 1 - e^-eps/2,
ratio 2e^eps - 1 > e^eps."""
import sys, warnings
import numpy as np
from scipy.stats import beta
from diffprivlib.models import DecisionTreeClassifier, RandomForestClassifier
from diffprivlib.accountant import BudgetAccountant
warnings.simplefilter("ignore")
N = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
eps = 1.0
X = np.full((11, 1), 0.5)
y = np.array([0]*6 + [1]*5); y2 = y.copy(); y2[0] = 1
acc = BudgetAccountant()
def cp(k, n, a=0.05):
    return (beta.ppf(a/2, k, n-k+1) if k else 0.0, beta.ppf(1-a/2, k+1, n-k) if k < n else 1.0)
for name, make in [("DecisionTree", lambda: DecisionTreeClassifier(max_depth=2, epsilon=eps, bounds=(0, 1), classes=[0, 1], accountant=acc)),
                   ("RandomForest(n_estimators=1)", lambda: RandomForestClassifier(n_estimators=1, max_depth=2, epsilon=eps, bounds=(0, 1), classes=[0, 1], accountant=acc))]:
    k = [sum(make().fit(X, yy).predict([[0.5]])[0] == 1 for _ in range(N)) for yy in (y, y2)]
    (l1, h1), (l2, h2) = cp(k[0], N), cp(k[1], N)
    print(f"{name}: P_D(pred 1)={k[0]/N:.4f} [{l1:.4f},{h1:.4f}]  P_D'(pred 1)={k[1]/N:.4f} [{l2:.4f},{h2:.4f}]")
    print(f"   ratio {k[1]/k[0]:.2f} (theory {2*np.e**eps-1:.2f}); conservative {l2/h1:.2f} vs allowed e^eps={np.e**eps:.2f}; empirical eps >= {np.log(l2/h1):.2f}")
