# How often does the intercept run away (objective unbounded below in the unregularised intercept direction)?
import time, numpy as np, warnings
from sklearn.exceptions import ConvergenceWarning
from diffprivlib.models.logistic_regression import _logistic_regression_path
X = np.r_[np.zeros(9), -1.0][:, None]; y = np.r_[np.ones(8), 0.0, 0.0]
rng = np.random.RandomState(0); out = []; nconv = 0
for _ in range(400):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        co, _, it = _logistic_regression_path(X, y, epsilon=1.0, data_norm=1.0, pos_class=1.0, Cs=[1.0],
                                              fit_intercept=True, random_state=rng, check_input=False)
        nconv += any(issubclass(x.category, ConvergenceWarning) for x in w)
    out.append(co[0])
out = np.array(out)
print(f"ConvergenceWarning in {nconv}/400 fits; |intercept| quantiles 50/90/99%: {np.percentile(abs(out[:,1]), [50,90,99]).round(2)}; max {abs(out[:,1]).max():.3g}")
