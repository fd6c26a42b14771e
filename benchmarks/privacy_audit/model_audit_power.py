"""The power of the audits of skdptune's KMeans and PCA (tests/audit/test_audit_models.py).

For each audit's events, the exact probabilities on both neighbouring datasets (numerical
integration of the laws the audit's docstring gives), for the model as it is (epsilon 1)
and for the copy that spends 8 times what it records; then 200 audits simulated from those
probabilities (binomial counts, ``N`` runs per side) and the harness's lower bound of each:
printed are the exact log-ratios and the smallest, median and largest simulated bound.

    PYTHONPATH=. python benchmarks/privacy_audit/model_audit_power.py 2000   # seconds
"""

import sys

import numpy as np
from scipy import integrate

sys.path.insert(0, "tests/audit")
from harness import epsilon_lower_bound  # noqa: E402

COUNT_WEIGHT = np.cbrt(4 * 0.225 ** 2)  # skdptune._models.cluster.budget_split at one feature


def kmeans_probabilities(factor, offset):
    """The KMeans audit's six tail events: the last iteration's sum (``offset`` +-0.5 plus
    Laplace noise) over its count (100 plus Laplace noise), two iterations of epsilon 1."""
    sum_scale = 1 / (factor * 0.5 / (1 + COUNT_WEIGHT))
    count_scale = 2 / (factor * 0.5 * COUNT_WEIGHT / (1 + COUNT_WEIGHT))

    def above(a):  # P(Laplace(sum_scale) >= a)
        return 0.5 * np.exp(-a / sum_scale) if a >= 0 else 1 - 0.5 * np.exp(a / sum_scale)

    probabilities = []
    for j, upper in [(2, True), (3, True), (4, True), (2, False), (3, False), (4, False)]:
        def integrand(noise):
            count = 100 + noise
            density = np.exp(-abs(noise) / count_scale) / (2 * count_scale)
            if upper:
                return density * above(j * count / 200 - offset)
            return density * (1 - above(-j * count / 200 - offset))
        probabilities.append(integrate.quad(integrand, -100, 2000, limit=400)[0])
    return np.array(probabilities)


def pca_probabilities(kappa, axis):
    """The PCA audit's four events: the component's angle under ``exp(kappa u_axis^2)``."""
    def density(phi):
        return np.exp(kappa * (np.cos(phi) if axis == 0 else np.sin(phi)) ** 2)

    total = integrate.quad(density, 0, np.pi)[0]
    bins = [integrate.quad(density, np.radians(15 * i), np.radians(15 * i + 15))[0] / total
            for i in range(12)]
    return np.array([sum(bins[i] for i in event)
                     for event in ({0, 11}, {5, 6}, {0, 1, 10, 11}, {4, 5, 6, 7})])


def main():
    n_runs = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rng = np.random.default_rng(0)
    cases = [
        ("KMeans", kmeans_probabilities(1, -0.5), kmeans_probabilities(1, 0.5)),
        ("KMeans, 8 x", kmeans_probabilities(8, -0.5), kmeans_probabilities(8, 0.5)),
        # The component's exponent is (epsilon / 2) / 2: one share for the eigenvalues.
        ("PCA", pca_probabilities(0.25, 0), pca_probabilities(0.25, 1)),
        ("PCA, 8 x", pca_probabilities(2.0, 0), pca_probabilities(2.0, 1)),
    ]
    for name, on_d, on_d_prime in cases:
        exact = np.abs(np.log(on_d / on_d_prime))
        bounds = [epsilon_lower_bound(
            {i: (rng.binomial(n_runs, on_d[i]), rng.binomial(n_runs, on_d_prime[i]))
             for i in range(len(on_d))}, n_runs).epsilon_lower_bound for _ in range(200)]
        print(f"{name}: exact log-ratios {np.round(exact, 3)}; simulated bounds at {n_runs} "
              f"runs: min {min(bounds):.3f}, median {np.median(bounds):.3f}, "
              f"max {max(bounds):.3f}")


if __name__ == "__main__":
    main()
