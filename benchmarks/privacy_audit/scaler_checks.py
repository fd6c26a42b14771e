import numpy as np, warnings
from itertools import product
from scipy.optimize import minimize
from sklearn.utils import get_tags
from diffprivlib.mechanisms import LaplaceBoundedDomain
from diffprivlib.models import StandardScaler
warnings.filterwarnings("ignore")
rng = np.random.default_rng(0)
# 1. population-variance sensitivity under replace-one on [0,1]: diffprivlib uses (n-1)/n^2
for n in [2, 3, 4, 6]:
    best = 0
    for _ in range(3000):
        x = rng.uniform(0, 1, n)
        x = np.where(rng.random(n) < 0.6, np.round(x), x)
        for v in (0.0, 1.0, rng.uniform()):
            x2 = x.copy(); x2[0] = v
            best = max(best, abs(np.var(x) - np.var(x2)))
    print(f"n={n}: max |var(D)-var(D')| found {best:.4f}; diffprivlib sensitivity {(n-1)/n**2:.4f}")
# 2. exact loss of LaplaceBoundedDomain as used for the variance (domain [0,(u-l)^2/4])
for n, eps in [(10, 0.05), (100, 0.5), (1000, 0.1), (50, 2.0)]:
    sens, U = (n - 1) / n**2, 0.25
    m = LaplaceBoundedDomain(epsilon=eps, sensitivity=sens, lower=0, upper=U); m._scale = m._find_scale(); s = m._scale
    Z = lambda v: s * (2 - np.exp(-v / s) - np.exp(-(U - v) / s))
    vs = np.linspace(0, U - sens, 2001)
    # sup over y of |y-v'|-|y-v| = sens; so sup loss = sens/s + max log Z(v')/Z(v)
    worst = max(sens / s + abs(np.log(Z(vs + sens) / Z(vs))).max(), 0)
    print(f"LaplaceBoundedDomain n={n} eps={eps}: exact worst-case loss {worst:.4f}")
# 3. NaNs: tags and what is released
print("StandardScaler allow_nan tag:", get_tags(StandardScaler()).input_tags.allow_nan)
X = rng.uniform(0, 1, (100, 2)); X[:7, 1] = np.nan
ss = StandardScaler(epsilon=1.0, bounds=(0, 1), random_state=0).fit(X)
print("n_samples_seen_ released exactly:", ss.n_samples_seen_)
