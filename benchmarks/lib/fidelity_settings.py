"""The fidelity study's settings, in one place that ``fidelity_study.py`` (which runs the
study) and :mod:`lib.fidelity_summary` (which tabulates it) both import: the summary never
imports the entry script.

Settings only, and the proposed partition-count rule that the study (its E experiment) and
the summary (its table of the rule's k) both evaluate.
"""

import math

import numpy as np

#: The library's defaults that the study keeps fixed.
VALIDATION_FRACTION = 0.2
DELTA = 1e-6
REPS = (0, 1, 2)

#: Refit epsilons of the fidelity table (B) and of the regret study (C).
B_REFIT_EPSILONS = (0.5, 2.0)
SELECTION_EPSILONS = (0.1, 0.25, 0.5, 1.0, 2.0)
SHARES = (0.05, 0.1, 0.2, 0.3, 0.5)
SELECTOR_RUNS = 200

#: Per panel: partition counts of B and C, refits per repetition for A, repetitions of B, and
#: the total budgets (and shares) of E. Reduced for the expensive panels (see summary.md).
CONFIG = {
    "adult-lr": dict(ks=(10, 20, 50, 100, 200), refits=5, b_reps=REPS,
                     b_epsilons=B_REFIT_EPSILONS, totals=(1.0, 4.0),
                     shares=(0.1, 0.2, 0.3, 0.5), e_reps=(0, 1), extra_on={400: (0, 1)}),
    "adult-nb": dict(ks=(10, 50), refits=4, b_reps=(0, 1), b_epsilons=(0.5,),
                     totals=(), shares=(), e_reps=()),
    "adult-rf": dict(ks=(10, 50), refits=4, b_reps=(0, 1), b_epsilons=(0.5,),
                     totals=(), shares=(), e_reps=()),
    "big-lr": dict(ks=(100, 1000), refits=4, b_reps=REPS, b_epsilons=(0.5,), totals=(1.0,),
                   shares=(0.5,), e_reps=(0, 1), off_reps={1000: (0,)}),
}

#: Doubling prototypes of D: name -> keyword arguments of fidelity_study.prototype_doubling.
PROTOTYPES = {
    "dbl/faithful": {},
    "dbl/shuffle": {"order": "shuffle_run"},
    "dbl/shuffle_iter": {"order": "shuffle_iter"},
    "dbl/lyu": {"noise": "lyu"},
    "dbl/cap25": {"max_iter": 25},
    "dbl/cap15": {"max_iter": 15},
    "dbl/shuffle+lyu": {"order": "shuffle_run", "noise": "lyu"},
    "dbl/shuffle+lyu+cap25": {"order": "shuffle_run", "noise": "lyu", "max_iter": 25},
    "dbl/shuffle+lyu+cap15": {"order": "shuffle_run", "noise": "lyu", "max_iter": 15},
}
LIBRARY_SELECTORS = ("exponential", "permute_and_flip", "report_noisy_max", "doubling")
E_SELECTORS = ("exponential", "permute_and_flip", "report_noisy_max", "doubling",
               "dbl/shuffle+lyu+cap25")


#: The auto-k rule's constants (see :func:`auto_partitions`).
AUTO_K = {"noise_target": 0.03, "min_k": 10, "max_k": 1000}


def auto_partitions(n_samples, n_features, n_candidates, epsilon, selector="permute_and_flip"):
    """PROPOSED ``n_partitions="auto"`` (prototype, not library code), public quantities only.

    From the regret study (C, see summary.md): for the one-shot selectors the regret falls
    with ``k * epsilon`` and, with partition_scaling on, kept falling up to the largest k
    tested on Adult (about one training record per feature per partition). So:

    - ``k_noise``: the k at which the one-shot selectors' noise term ``2 * ln(m) / (k * eps)``
      (the exponential mechanism's bound with sensitivity 1/k, beta = 1) is ``NOISE_TARGET``
      (0.03 utility units, reached at k * eps = 200 for m = 20 candidates); more partitions
      buy nothing measurable and cost fidelity and time;
    - ``k_size``: at most ``n_samples * (1 - validation_fraction) / n_features`` partitions,
      so that a partition fit expects at least one training record per feature;
    - ``k = min(k_noise rounded to the nearest (in log scale) value of the 1-2-5 series,
      k_size rounded down to it)``, within [10, 1000].

    ``selector`` is accepted for the rule's signature: the one-shot selectors share it; the
    doubling loop did not respond to k at all in these settings (its regret is set by the grid
    order, see D), so it gets the same k.
    """
    k_noise = 2.0 * math.log(max(n_candidates, 2)) / (epsilon * AUTO_K["noise_target"])
    k_size = n_samples * (1 - VALIDATION_FRACTION) / max(n_features, 1)
    series = np.array([m * 10 ** e for e in range(1, 3) for m in (1, 2, 5)] + [1000])
    nearest = series[np.argmin(np.abs(np.log(series) - np.log(k_noise)))]
    below = series[series <= max(k_size, AUTO_K["min_k"])].max()
    return int(min(max(min(nearest, below), AUTO_K["min_k"]), AUTO_K["max_k"]))
