"""Private naive Bayes whose released model does not depend on which classes occur."""

import numpy as np
from diffprivlib.mechanisms import GeometricTruncated, LaplaceBoundedDomain, LaplaceTruncated
from diffprivlib.models import GaussianNB as DPGaussianNB
from sklearn.utils.multiclass import check_classification_targets

from .._clipping import validate_clippable
from .._validation import declared_classes
from .base import accountant_of, declared_class_count, random_sources, start_fit
from .facts import ModelFacts


class GaussianNB(DPGaussianNB):
    r"""diffprivlib's ``GaussianNB`` (Vaidya, Shafiq, Basu & Hong 2013) over declared classes.

    diffprivlib 0.6.6's fit releases noisy statistics only for the classes present in ``y``
    (``np.unique(y)``), and ``classes_`` with them: a class held by a single record appears in
    the released model or not with that record, and its statistics are exact zeros when it is
    absent. No finite epsilon covers that. This class fits the same mechanisms for **every
    declared class**, present or not, so the released model's shape and law depend on the
    records only through the noisy statistics.

    Mechanisms (per fit, ``d`` features, ``K`` declared classes, every record clipped to the
    declared ``bounds`` ``[lower_j, upper_j]``, ``w_j = upper_j - lower_j``):

    - the ``K`` class counts: ``GeometricTruncated(epsilon / 3, sensitivity=1)`` on ``[1,
      n]``, then adjusted by diffprivlib's rule to sum to ``n`` (public under replace-one
      adjacency): post-processing;
    - per class and feature, the sum: ``LaplaceTruncated(epsilon / (3 d), sensitivity=w_j)``,
      divided by the noisy count; the sum of squares about that mean:
      ``LaplaceBoundedDomain(epsilon / (3 d), sensitivity=max(mean - lower_j, upper_j -
      mean)**2)``, divided by the noisy count (diffprivlib's ``_update_mean_variance``).

    Classes hold disjoint records, so the fit records ``epsilon``; a replaced record can move
    between two classes, and the refit gate charges :func:`gaussian_nb_charge` times
    ``epsilon`` for that (the same law as diffprivlib's, whose analysis holds here).

    Parameters
    ----------
    epsilon : float, default=1.0
        The epsilon the fit records.
    bounds : tuple
        ``(lower, upper)``, scalars or one value per feature, declared from public knowledge.
        Required: bounds read from the data are not private.
    classes : array-like or None, default=None
        The class labels, declared from public knowledge (every label of ``y`` must be one).
        None reads them from the data with a ``PrivacyLeakWarning`` (not private; the refit
        gate refuses to release such a fit).
    priors : array-like of shape (n_classes,) or None, default=None
        As in scikit-learn: fixed prior probabilities (in the order of ``classes_``).
    var_smoothing : float, default=1e-9
        Added to every variance (diffprivlib's ``epsilon_``; not scaled by the data).
    random_state : int, RandomState or None, default=None
        None draws the noise from :mod:`secrets`; a seed makes it reproducible, with no
        guarantee.
    accountant : BudgetAccountant or None, default=None

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
        The noisy counts.
    class_prior_ : ndarray of shape (n_classes,)
    theta_, var_ : ndarray of shape (n_classes, n_features)
        The noisy means and variances.
    epsilon_ : float
        ``var_smoothing``.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from skdptune.naive_bayes import GaussianNB
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(0, 1, (2000, 2))
    >>> y = (X[:, 0] > 0.5).astype(int)
    >>> model = GaussianNB(epsilon=5.0, bounds=(0, 1), classes=[0, 1, 2], random_state=0)
    >>> model.fit(X, y).classes_
    array([0, 1, 2])
    """

    _parameter_constraints = {
        **DPGaussianNB._parameter_constraints,
        "classes": ["array-like", None],
    }

    def __init__(self, *, epsilon=1.0, bounds=None, classes=None, priors=None,
                 var_smoothing=1e-9, random_state=None, accountant=None):
        super().__init__(epsilon=epsilon, bounds=bounds, priors=priors,
                         var_smoothing=var_smoothing, random_state=random_state,
                         accountant=accountant)
        self.classes = classes

    def fit(self, X, y, sample_weight=None):
        """Fit the noisy class statistics of every declared class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : ignored
            As in diffprivlib.

        Returns
        -------
        self : GaussianNB
        """
        random_state = self._start_fit(sample_weight)
        X, y = validate_clippable(self, X, y)
        check_classification_targets(y)
        lower, upper = self._check_bounds(self.bounds, shape=X.shape[1])
        X = self._clip_to_bounds(X, (lower, upper))
        self.classes_ = declared_classes(self.classes, y, type(self).__name__)
        by_class = [X[y == label] for label in self.classes_]
        return self.release(
            np.array([len(rows) for rows in by_class]),
            np.array([[rows[:, j].sum() for j in range(X.shape[1])] for rows in by_class]),
            lambda i, j, mean: ((by_class[i][:, j] - mean) ** 2).sum(),
            (lower, upper), random_state)

    def _start_fit(self, sample_weight=None):
        """The shared prologue (:func:`~skdptune._models.base.start_fit`: ``bounds``
        declared) and the noise generator (:func:`~skdptune._models.base.random_sources`):
        what every fit does before it reads the data."""
        start_fit(self, ("bounds",), sample_weight)
        return random_sources(self.random_state)[0]

    def release(self, counts, sums, centred_squares, bounds, random_state):
        """The fit's releases from the class statistics of the clipped records.

        The one place the mechanisms run, whether the statistics were computed in memory
        (:meth:`fit`) or reduced over chunks (``skdptune._distributed``): the same
        mechanisms, drawn in the same order, so the same law and the same charge.

        Parameters
        ----------
        counts : ndarray of shape (n_classes,)
            The records of each class of ``classes_`` (set before the call).
        sums : ndarray of shape (n_classes, n_features)
            Per class, the sum of each clipped feature.
        centred_squares : callable
            ``(class index, feature index, noisy mean) -> sum of (x - mean) ** 2`` over the
            class's clipped values of the feature: called once per class and feature, after
            that mean is drawn.
        bounds : (ndarray, ndarray)
            The expanded declared bounds, one value per feature.
        random_state : numpy.random.RandomState or None
            The noise generator (None: :mod:`secrets`).

        Returns
        -------
        self : GaussianNB

        Notes
        -----
        Privacy (every record clipped to ``bounds``): the ``K`` counts by
        ``GeometricTruncated(epsilon / 3, sensitivity=1)`` (:func:`_noisy_counts`), then per
        class and feature the sum by ``LaplaceTruncated(epsilon / (3 d), sensitivity=w_j)``
        and the sum of squares about the noisy mean by ``LaplaceBoundedDomain(epsilon / (3 d),
        sensitivity=max(mean - lower_j, upper_j - mean)**2)``: diffprivlib 0.6.6's
        ``_update_mean_variance`` from an empty past, mechanism for mechanism. Classes hold
        disjoint records (parallel composition); the three thirds compose sequentially:
        ``epsilon`` recorded, :func:`gaussian_nb_charge` times it charged by the gate.
        """
        lower, upper = bounds
        n_classes, n_features = sums.shape
        if self.priors is not None:
            priors = np.asarray(self.priors, dtype=float)
            if len(priors) != n_classes or not np.isclose(priors.sum(), 1.0) or np.any(
                    priors < 0):
                raise ValueError(f"priors={self.priors!r} must be {n_classes} non-negative "
                                 "probabilities, one per class of classes_, summing to 1.")
        self.epsilon_ = self.var_smoothing
        noisy_counts = _noisy_counts(counts, self.epsilon, random_state)
        self.theta_ = np.zeros((n_classes, n_features))
        self.var_ = np.zeros((n_classes, n_features))
        local_epsilon = self.epsilon / 3 / n_features
        for i, n_noisy in enumerate(noisy_counts):
            for j in range(n_features):
                width = upper[j] - lower[j]
                mean = LaplaceTruncated(
                    epsilon=local_epsilon, delta=0, sensitivity=width, lower=lower[j] * n_noisy,
                    upper=upper[j] * n_noisy, random_state=random_state,
                ).randomise(sums[i, j]) / n_noisy
                square = max(mean - lower[j], upper[j] - mean) ** 2
                self.var_[i, j] = LaplaceBoundedDomain(
                    epsilon=local_epsilon, delta=0, sensitivity=square, lower=0,
                    upper=square * n_noisy, random_state=random_state,
                ).randomise(centred_squares(i, j, mean)) / n_noisy
                self.theta_[i, j] = mean
        self.var_ += self.epsilon_
        self.class_count_ = noisy_counts.astype(float)
        self.class_prior_ = (priors if self.priors is not None
                             else self.class_count_ / self.class_count_.sum())
        accountant_of(self).spend(self.epsilon, 0)
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Not supported: each call would spend ``epsilon`` again on overlapping statistics.

        Raises
        ------
        NotImplementedError
        """
        raise NotImplementedError(
            "skdptune.naive_bayes.GaussianNB has no partial_fit: call fit on all the data, "
            "which spends epsilon once.")


def _noisy_counts(counts, epsilon, random_state):
    """diffprivlib's noisy class counts (``GaussianNB._noisy_class_counts``) for every declared
    class, from its true count ``counts[i]``: ``GeometricTruncated(epsilon / 3,
    sensitivity=1)`` on ``[1, n]`` each (a count of 0 included), then one unit at a time
    towards the sum ``n`` (public), the smallest counts first when above and the largest
    first when below: post-processing of the noisy counts."""
    n_total, n_classes = int(np.sum(counts)), len(counts)
    if n_total < n_classes:  # counts of at least 1 each could never sum to n
        raise ValueError(f"{n_total} records are fewer than the {n_classes} declared "
                         "classes; GaussianNB needs at least one record per class.")
    mechanism = GeometricTruncated(epsilon=epsilon / 3, sensitivity=1, lower=1, upper=n_total,
                                   random_state=random_state)
    counts = np.array([mechanism.randomise(int(count)) for count in counts])
    order = np.argsort(counts)
    i = 0 if counts.sum() > n_total else n_classes - 1
    while counts.sum() != n_total:
        step = np.sign(n_total - counts.sum())
        counts[order[i]] = np.clip(counts[order[i]] + step, 1, n_total)
        i = (i - step) % n_classes
    return counts


def gaussian_nb_charge(step):
    """What diffprivlib 0.6.6's ``GaussianNB`` spends per unit of the ``epsilon`` it records:
    ``(4 + 2 mean_j(M_j / w_j)) / 3``, with ``w_j = upper_j - lower_j`` and ``M_j =
    max(|lower_j|, |upper_j|)`` from the declared bounds (2 for bounds ``[0, 1]``).

    Its fit releases, per class present, a count (``GeometricTruncated(epsilon / 3,
    sensitivity=1)``), then per feature a sum (``LaplaceTruncated(epsilon / (3 d),
    sensitivity=w_j)``, divided by the noisy count) and a sum of squares about that mean
    (``LaplaceBoundedDomain(epsilon / (3 d), sensitivity=max(mean - lower_j, upper_j -
    mean)**2)``); classes hold disjoint records, so it records ``epsilon``. Replacing a record
    by one of another class changes two classes' releases at once: two counts by 1 each
    (``2 epsilon / 3``), two sums of each feature by up to ``M_j`` each (``2 (M_j / w_j)
    epsilon / (3 d)``, which exceeds ``w_j`` when the bounds exclude 0), and two sums of squares
    by up to their sensitivity each (``2 epsilon / 3``). Sequential composition over the
    three gives the factor; a replacement within a class costs at most ``epsilon``. The class
    labels themselves (``classes_``) are not covered: see the documentation's known faults.
    :class:`GaussianNB` makes the same releases for every declared class: the same factor.

    Parameters
    ----------
    step : GaussianNB or diffprivlib.models.GaussianNB
        With declared ``bounds``.

    Returns
    -------
    factor : float
    """
    lower, upper = (np.asarray(bound, dtype=float) for bound in step.bounds)
    ratio = np.maximum(np.abs(lower), np.abs(upper)) / (upper - lower)
    return float((4.0 + 2.0 * np.mean(ratio)) / 3.0)


def gaussian_nb_zero_out(step):
    """What diffprivlib 0.6.6's ``GaussianNB`` spends per unit of its recorded ``epsilon``
    under zero-out adjacency: ``(2 + mean_j(M_j / w_j)) / 3`` (1 for bounds ``[0, 1]``),
    with ``w_j`` and ``M_j`` as in :func:`gaussian_nb_charge`.

    A null record changes one class's releases only: its count by 1
    (``GeometricTruncated(epsilon / 3, sensitivity=1)``: ``epsilon / 3``), each feature's sum by
    ``|x_j| <= M_j`` against the calibrated ``w_j`` (``(M_j / w_j) epsilon / (3 d)`` each),
    and each sum of squares about the released mean by one term, at most its calibrated
    sensitivity (``epsilon / (3 d)`` each). Sequential composition gives the factor.
    """
    lower, upper = (np.asarray(bound, dtype=float) for bound in step.bounds)
    ratio = np.maximum(np.abs(lower), np.abs(upper)) / (upper - lower)
    return float((2.0 + np.mean(ratio)) / 3.0)


def gaussian_nb_noise_dimension(step, width):
    """The tuning policy's ``D`` for naive Bayes: ``width * K``, a noisy mean and a noisy
    variance per feature and class (``K`` the declared classes, 2 when none are declared),
    each of noise scale ``1 / (n * epsilon)`` up to the bounds; the ``K`` counts are
    neglected beside them.

    Parameters
    ----------
    step : GaussianNB or diffprivlib.models.GaussianNB
    width : int
        The columns of its input.

    Returns
    -------
    dimension : int
    """
    return width * declared_class_count(step)


#: What a released fit keeps, each with why its mechanism covers it (besides the public
#: shape).
RELEASES = {
    "classes_": "the declared classes",
    "class_count_": "the noisy class counts (GeometricTruncated)",
    "class_prior_": "the noisy class counts, normalised (post-processing)",
    "theta_": "noisy means: noisy sums (LaplaceTruncated) over noisy counts",
    "var_": "noisy variances (LaplaceBoundedDomain) plus epsilon_",
    "epsilon_": "var_smoothing itself in diffprivlib (a parameter, not the data's variance)",
}

#: The facts of :class:`GaussianNB` (the refit gate's row reads them).
FACTS = ModelFacts(
    why="diffprivlib's GaussianNB over declared classes: pure DP given declared bounds and "
        "classes; a fit spends gaussian_nb_charge times the `epsilon` it records under "
        "replace-one adjacency, and is charged that",
    declared=("bounds", "classes"),
    charge=gaussian_nb_charge,
    zero_out=gaussian_nb_zero_out,
    releases=RELEASES,
    noise_dimension=gaussian_nb_noise_dimension,
)
