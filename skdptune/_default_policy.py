"""Tune, or release the estimator as given? The default's margin and the selection's share.

A search that names an untuned default candidate (by default, the estimator as given) spends
part of its total epsilon ``T`` on the selection and refits the selected candidate with the
rest. Selecting pays only when the selection finds a lead larger than what its share costs the
refit; favouring the default protects the released model from a noisy pick, and costs the
leads it hides. This module chooses both, before any data are touched, to maximise the
released model's expected utility under an explicit model of public quantities (the
derivation, and the simulation that checks it, are in the user guide's "Tune or release"
section and ``benchmarks/default_policy.py``):

- **The selection's noise.** Permute-and-flip on partition utilities of sensitivity ``1 / k``
  with epsilon ``epsilon_s = share * T * (1 - score_share)`` stops at a candidate trailing
  the best (offset) utility by ``g`` with probability ``exp(-g / sigma)``, ``sigma = 2 / (k
  * epsilon_s)``; ``k`` is ``skdptune._partition.auto_n_partitions`` of ``epsilon_s``.
- **What the share costs the refit.** Every DP model of the library adds noise of scale
  ``1 / (n * epsilon)``; the default loses about ``A / epsilon`` to it, with ``A = a *
  D / n``: ``D`` the model's noise dimension (its coefficients, or its cells) and ``a`` a
  constant per family (:data:`REFIT_NOISE`), measured on the development tables. Refitting
  with ``(1 - share) * T`` instead of ``T`` costs ``A / T * share / (1 - share)``.
- **What the grid may hold** (the prior), measured per model family on development tables
  (``skdptune._tuning_evidence``): the default's best rival leads it by ``L_seen`` in the
  partition utilities the selection reads and by ``L_real`` in full-data utility, one
  equally likely pair per measured quantile (a partition's imperfect fidelity is in the
  difference: the rival the partitions favour may be worse on all the data). The other
  candidates trail the default by an exponential deficit of the family's measured mean.
  ``k`` never goes below the family's ``min_partition_rows`` training records per
  partition, where partition utilities stop ranking as the refit does.

Under that model the selection probabilities of permute-and-flip have a closed form (a random
order is a uniform arrival time per candidate: ``P(i) = p_i * int_0^1 prod_{j != i} (1 - p_j
t) dt``), so the expected gain of every ``(share, margin)`` on a grid is computed exactly, and
the best is taken; a share of 0 (no selection: the default refit with all of ``T``) is one of
the choices. The choice reads public quantities only: it is not a privacy release.
"""

import math
from dataclasses import dataclass, replace

import numpy as np

from ._gate import ALLOWED, is_registered
from ._partition import auto_n_partitions
from ._tuning_evidence import POOLED

#: The shares of ``T`` the policy compares (0: decline to select).
SHARES = tuple(np.round(np.arange(0.0, 0.5001, 0.025), 3))
#: The margins it compares, in units of the selection's noise ``sigma``.
MARGINS = tuple(np.round(np.arange(0.0, 8.0001, 0.25), 2))
#: A policy whose expected gain is below this (utility units) declines: selecting for less
#: than a tenth of a point is not worth the risk the model does not capture.
MIN_GAIN = 0.001

#: The refit-noise constant ``a`` (utility units): the default loses about ``a * D / (n *
#: epsilon)`` to its refit's noise. Measured on the development tables' defaults
#: (``benchmarks/refit_noise.py``: the mean of 10 refits at totals 0.5 to 4, least squares on
#: ``1 / epsilon``): objective perturbation 17.9, 6.9 and 6.6 (flights, HI, Adult; ``D``: its
#: coefficients), GaussianNB 98.7, 10.4 and 1.0 (flights, HI, Adult: noisy curves; ``D``:
#: features x classes), Ridge's bounded R² 15.4, 13.7 and 6.2 (diamonds, cps1988, movies;
#: ``D``: its monomials). The families' geometric means, 9.4, 10.1 and 10.9, agree: one
#: constant for every family. The forests' defaults predicted the majority class at every
#: budget (no slope to measure): they take the same constant with ``D`` their leaves.
REFIT_NOISE_CONSTANT = 10.0

#: The selection's share of ``epsilon`` without a default candidate (``default=None``,
#: ``selection_share="auto"``): half. Measured with ``benchmarks/fidelity_study.py`` (section
#: E): on Adult at a total of 1 it gave the best released model among shares 0.1 to 0.5.
SHARE_WITHOUT_DEFAULT = 0.5

# Gauss-Legendre nodes on [0, 1] for the arrival-time integrals (the integrands are
# polynomials of degree m: exact up to 2 * 48 - 1).
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(48)
_NODES, _WEIGHTS = (_NODES + 1) / 2, _WEIGHTS / 2


def noise_dimension(step, width):
    """The noise dimension ``D`` of a configured step whose input has ``width`` columns.

    One of the library's own DP models: its gate row's (``Rule.noise_dimension``, from the
    model's room); never a guess. Any other class: the first of its MRO whose gate row
    declares one (diffprivlib's models, a subclass as its parent), else ``width + 1``.

    Parameters
    ----------
    step : estimator
    width : int

    Returns
    -------
    D : int

    Raises
    ------
    NotImplementedError
        For an allowed DP class of skdptune that declares no noise dimension.
    """
    rule = ALLOWED.get(type(step))
    if (rule is not None and rule.kind == "dp" and not is_registered(type(step))
            and type(step).__module__.startswith("skdptune.")):
        dimension = rule.noise_dimension
        if dimension is None:
            raise NotImplementedError(
                f"{type(step).__name__} is one of skdptune's DP models but declares no noise "
                "dimension for the tuning policy: give its room's FACTS one "
                "(skdptune._models.facts.ModelFacts.noise_dimension)")
        return dimension(step, width)
    for cls in type(step).__mro__:
        rule = ALLOWED.get(cls)
        dimension = rule.noise_dimension if rule is not None else None
        if dimension is not None:
            return dimension(step, width)
    return width + 1


def refit_noise(estimator, n_samples, width):
    """``A = a * D / n`` of a configured estimator (a pipeline: of its last step), whose
    input has ``width`` columns.

    Parameters
    ----------
    estimator : estimator
    n_samples : int
    width : int
        Columns reaching the last step.

    Returns
    -------
    A : float
        In utility units times epsilon.
    """
    final = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
    return REFIT_NOISE_CONSTANT * float(noise_dimension(final, width)) / n_samples


@dataclass(frozen=True)
class Policy:
    """The split of a total epsilon between selection and refit, and the default's margin.

    Attributes
    ----------
    share : float
        The selection's share of ``T`` (0: no selection).
    margin : float
        The default's bonus in utility units.
    n_partitions : int or None
        ``k`` at that share (None without a selection).
    sigma : float
        The selection's noise scale ``2 / (k * epsilon_s)`` (inf without a selection).
    refit_loss : float
        What the share costs the refit, in utility units (the model's ``A / T * share / (1 -
        share)``).
    expected_gain : float
        The model's expected gain of the released model over the default refit with all of
        ``T``, in utility units (0 when declining).
    refit_noise : float
        The model's ``A`` (utility units times epsilon).
    reasons : DeclineReasons or None
        Why it declines, in numbers (:func:`decline_reasons`); None when it selects.
    """

    share: float
    margin: float
    n_partitions: object
    sigma: float
    refit_loss: float
    expected_gain: float
    refit_noise: float
    reasons: object = None

    @property
    def declined(self):
        """Whether the policy releases the default without a selection."""
        return self.share == 0


def selection_gain(margin, sigma, n_candidates, evidence=POOLED):
    """The expected utility the selection adds over the default, under a family's prior.

    Parameters
    ----------
    margin : float or ndarray
        The default's bonus, utility units.
    sigma : float
        The selection's noise scale.
    n_candidates : int
        ``m``, the default included.
    evidence : skdptune._tuning_evidence.FamilyEvidence, default=POOLED
        The prior.

    Returns
    -------
    gain : float or ndarray
        ``E[L_selected]`` averaged over the family's measured leads (the best rival's lead
        as the partitions see it, and as the refit gets it), permute-and-flip's
        probabilities exact for each.
    """
    margin = np.asarray(margin, dtype=float)
    seen, real = np.asarray(evidence.leads, dtype=float).T
    gains = _gain_given_lead(margin[..., None], seen, sigma, n_candidates,
                             evidence.others_deficit, real=real)
    return gains.mean(axis=-1)  # the measured leads are equally likely


def _gain_given_lead(margin, lead, sigma, n_candidates, others_deficit, real=None):
    """``E[L_selected]`` when the leader's partition utility leads the default's by ``lead``
    (what the selection sees), its full-data utility by ``real`` (what the release gets;
    ``lead`` when None), and ``m - 2`` others trail the default by exponential deficits of
    mean ``others_deficit``."""
    real = lead if real is None else real
    top = np.maximum(margin, lead)
    p_default = np.exp(-(top - margin) / sigma)
    p_leader = np.exp(-(top - lead) / sigma)
    # An other's coin exp(-(top + D) / sigma), D ~ Exp(mean d): E[coin] and E[D * coin].
    ratio = others_deficit / sigma
    q = np.exp(-top / sigma) / (1 + ratio)
    r = np.exp(-top / sigma) * others_deficit / (1 + ratio) ** 2
    others = n_candidates - 2
    t = _NODES.reshape((-1,) + (1,) * np.ndim(top))
    weights = _WEIGHTS.reshape(t.shape)
    rest = (1 - q * t) ** max(others - 1, 0)
    leader = p_leader * np.sum(weights * (1 - p_default * t) * (1 - q * t) * rest, axis=0)
    other_loss = others * r * np.sum(weights * (1 - p_default * t) * (1 - p_leader * t) * rest,
                                     axis=0)
    return real * leader - other_loss


def choose(total, *, n_samples, n_candidates, refit_noise, score_share, validation_fraction,
           share=None, n_partitions="auto", evidence=POOLED, explain=True):
    """The :class:`Policy` of a search, from public quantities.

    Parameters
    ----------
    total : float
        ``T``, the whole fit's epsilon.
    n_samples : int
        ``n`` (public under replace-one adjacency).
    n_candidates : int
        ``m``, the default included.
    refit_noise : float
        ``A`` of the default's family (:func:`refit_noise`); 0 without a refit (the
        selection then takes all of ``T``: ``share`` must be 1).
    score_share : float
        The ``best_score_`` estimate's share of the selection's epsilon.
    validation_fraction : float
    share : float or None, default=None
        A fixed share (the user's ``selection_share``, or 1 without a refit): only the margin
        is chosen. None: the share too, from :data:`SHARES`.
    n_partitions : int or "auto", default="auto"
        The search's ``n_partitions`` (``"auto"``: resolved at each share's epsilon, never
        below the family's ``min_partition_rows`` training records per partition).
    evidence : skdptune._tuning_evidence.FamilyEvidence, default=POOLED
        The default's family: its prior and partition floor.
    explain : bool, default=True
        Whether a declining policy carries its :class:`DeclineReasons`.

    Returns
    -------
    Policy
        With its :class:`DeclineReasons` when it declines.
    """
    best = Policy(0.0, 0.0, None, math.inf, 0.0, 0.0, float(refit_noise))
    shares = SHARES[1:] if share is None else (share,)
    margins = np.asarray(MARGINS)
    for candidate_share in shares:
        epsilon = candidate_share * total * (1 - score_share)
        k = n_partitions if n_partitions != "auto" else auto_n_partitions(
            n_samples, n_candidates=n_candidates, epsilon=epsilon,
            validation_fraction=validation_fraction,
            min_training_records=evidence.min_partition_rows)
        sigma = 2.0 / (k * epsilon)
        gains = selection_gain(margins * sigma, sigma, n_candidates, evidence)
        best_margin = int(np.argmax(gains))
        loss = (refit_noise / total * candidate_share / (1 - candidate_share)
                if candidate_share < 1 else 0.0)  # share 1: no refit
        gain = float(gains[best_margin] - loss)
        if share is not None or gain > max(best.expected_gain, MIN_GAIN):
            best = Policy(float(candidate_share), float(margins[best_margin] * sigma), k,
                          float(sigma), float(loss), gain, float(refit_noise))
    if best.declined and explain:
        best = replace(best, reasons=decline_reasons(
            total, n_samples=n_samples, n_candidates=n_candidates, refit_noise=refit_noise,
            score_share=score_share, validation_fraction=validation_fraction,
            n_partitions=n_partitions, evidence=evidence))
    return best


@dataclass(frozen=True)
class DeclineReasons:
    """Why a policy declined, in numbers: what the selection could resolve, and the nearest
    public settings under which the same model would select.

    Attributes
    ----------
    share : float
        The share of ``T`` the resolvable lead refers to (:data:`EXPLAINED_SHARE`).
    resolvable_lead : float
        Utility units: the lead over one rival that permute-and-flip with that share would
        find with probability 0.9 (``sigma * ln(10)``, its tail ``exp(-gap / sigma)``).
    refit_loss : float
        What that share costs the default's refit, utility units.
    n_samples, total, n_candidates : int, float or None
        The fewest records (``T`` and the grid unchanged) and the smallest total (``n`` and
        the grid unchanged) at which the policy
        would select; for candidates, the largest grid smaller than the search's that
        selects. None when no value up to the search's limits would.
    """

    share: float
    resolvable_lead: float
    refit_loss: float
    n_samples: object
    total: object
    n_candidates: object


#: The share a declined policy's explanation quotes the selection's resolution at.
EXPLAINED_SHARE = 0.25


def decline_reasons(total, *, n_samples, n_candidates, refit_noise, score_share,
                    validation_fraction, n_partitions="auto", evidence=POOLED):
    """The :class:`DeclineReasons` of a search whose :func:`choose` declined.

    Public quantities only, as :func:`choose`: records are searched by doubling up to
    ``2**40`` and the total up to 1,000 (the smallest power of two times the given value that
    selects), candidates by bisection down to 2.
    """
    common = dict(score_share=score_share, validation_fraction=validation_fraction,
                  n_partitions=n_partitions, evidence=evidence)
    epsilon = EXPLAINED_SHARE * total * (1 - score_share)
    k = n_partitions if n_partitions != "auto" else auto_n_partitions(
        n_samples, n_candidates=n_candidates, epsilon=epsilon,
        validation_fraction=validation_fraction,
        min_training_records=evidence.min_partition_rows)
    sigma = 2.0 / (k * epsilon)

    def selects(n=n_samples, t=total, m=n_candidates):
        # refit_noise is A = a * D / n: it scales with 1 / n.
        return not choose(t, n_samples=n, n_candidates=m, explain=False,
                          refit_noise=refit_noise * n_samples / n, **common).declined

    def doubling(select, start, limit):
        value = start
        while value <= limit:
            if select(value):
                return value
            value *= 2
        return None

    # Fewer candidates select more easily (less noise, fewer rivals): the largest grid that
    # selects, by bisection between 2 and m - 1.
    fewest = None
    low, high = 2, n_candidates - 1
    while low <= high:
        middle = (low + high) // 2
        if selects(m=middle):
            fewest, low = middle, middle + 1
        else:
            high = middle - 1
    return DeclineReasons(
        share=EXPLAINED_SHARE, resolvable_lead=float(sigma * math.log(10)),
        refit_loss=float(refit_noise / total * EXPLAINED_SHARE / (1 - EXPLAINED_SHARE)),
        n_samples=doubling(lambda n: selects(n=n), 2 * n_samples, 2 ** 40),
        total=doubling(lambda t: selects(t=t), 2 * total, 1000.0),
        n_candidates=fewest,
    )
