"""Realised iterations of the uncapped doubling loop: the simulation behind ``max_iter="auto"``.

The numbers that ``skdptune.selection._doubling.auto_max_iter``'s docstring cites: for each
``k * eps0`` and best utility, ``--runs`` selections over 100 candidates with utilities
uniform on ``[0, best]`` and one at ``best`` (granularity 0.01, floor 0), with the cap set to
the worst case so that no run is truncated. Prints the auto cap, the worst case, and per
setting the mean, the 99.9th percentile and the largest number of iterations. The selector is
called directly with ``sensitivity=1`` and ``delta=0``, so ``eps0 = epsilon / max_iter`` and
``epsilon = k_eps0 * max_iter`` gives each iteration ``k * eps0 = k_eps0``. Noise is seeded
(``--seed``): a simulation, not a release.

    python benchmarks/doubling_iterations.py             # 2,000 runs per setting, about 45 s
    python benchmarks/doubling_iterations.py --runs 100  # a quick check
"""

import argparse

import numpy as np

from skdptune.selection import ProposeTestDoubling
from skdptune.selection._doubling import auto_max_iter, worst_case_iterations


def simulate_iterations(k_eps0_values=(1, 10, 100, 1000), best_values=(0.3, 0.6, 0.9),
                        n_runs=2000, n_candidates=100, granularity=0.01, seed=0):
    """Print the realised iterations without a cap, per (``k * eps0``, best utility)."""
    rng = np.random.RandomState(seed)
    worst = worst_case_iterations(granularity, 0.0)
    selector = ProposeTestDoubling(granularity=granularity, max_iter=worst)
    print(f"auto cap = {auto_max_iter(granularity, 0.0)}, worst case = {worst}")
    for k_eps0 in k_eps0_values:
        for best in best_values:
            counts = []
            for _ in range(n_runs):
                utilities = rng.uniform(0, best, n_candidates)
                utilities[rng.randint(n_candidates)] = best
                # Sensitivity 1 (k = 1) and eps0 = epsilon / worst: each iteration's
                # k * eps0 is k_eps0.
                result = selector.select(utilities, sensitivity=1.0, epsilon=k_eps0 * worst,
                                         delta=0.0, random_state=rng)
                counts.append(result.n_iterations)
            counts = np.array(counts)
            print(f"k*eps0={k_eps0:>5} best={best}: mean {counts.mean():5.1f}, "
                  f"p99.9 {np.percentile(counts, 99.9):5.1f}, max {counts.max()}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000,
                        help="selections per setting (default 2000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    simulate_iterations(n_runs=args.runs, seed=args.seed)


if __name__ == "__main__":
    main()
