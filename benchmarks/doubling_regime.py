"""Issue 18: can public, automatic choices of the doubling selector's ``granularity``,
``floor`` and ``max_iter`` make it select well at the library's default budgets?

From the forecast's simulation of the selector (``skdptune.forecast``: 4,000 runs, the best
candidate's utility 0.8, its position random, common random numbers), no data: the
probability that it selects the best candidate when that one leads by 0.05 (one rival, or 19
tied rivals) and when it leads one rival by the whole range 1, at two settings of the
defaults: Adult at a total epsilon of 1 (k = 416, the selector's epsilon 0.45) and at 4
(k = 110, 1.8). The choices: ``granularity`` in {0.01, 0.02, 0.05, 0.1}; ``floor`` 0 or 0.5
(for binary accuracy, what a constant classifier reaches: public); ``max_iter="auto"``
(``skdptune.selection._doubling.auto_max_iter``) and, for comparison, one permute-and-flip
row. Command (seconds)::

    OMP_NUM_THREADS=1 python benchmarks/doubling_regime.py
"""

from skdptune._forecast import _probability_of_best
from skdptune.selection import PermuteAndFlip, ProposeTestDoubling

SETTINGS = ((416, 0.45), (110, 1.8))
GRANULARITIES = (0.01, 0.02, 0.05, 0.1)
FLOORS = (0.0, 0.5)
DELTA = 1e-6


def main():
    print("| k | selector epsilon | selector | max_iter | P(best), lead 0.05 over 1 | "
          "lead 0.05 over 19 | lead 1 over 1 |")
    print("|---|---|---|---|---|---|---|")
    for k, epsilon in SETTINGS:
        rows = [(f"doubling, granularity {g:g}, floor {floor:g}",
                 ProposeTestDoubling(granularity=g, floor=floor)) for g in GRANULARITIES
                for floor in FLOORS] + [("permute-and-flip", PermuteAndFlip())]
        for label, selector in rows:
            probability = _probability_of_best(selector, epsilon, DELTA, k)
            max_iter = (selector.resolved_max_iter() if isinstance(selector, ProposeTestDoubling)
                        else 1)
            print(f"| {k} | {epsilon:g} | {label} | {max_iter} | {probability(0.05, 2):.2f} | "
                  f"{probability(0.05, 20):.2f} | {probability(1.0, 2):.2f} |")


if __name__ == "__main__":
    main()
