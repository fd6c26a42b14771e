"""Expected accuracy of candidates: independent DP refits, cached on disk and pooled.

The studies measure a candidate's *expected accuracy* at a refit epsilon as the mean test
accuracy of independent DP refits on a repetition's training part, pooled over repetitions,
with its standard error. The refits of one (panel, setting, repetition) are cached as one
``.npz`` file (``accuracy`` of shape ``(n_candidates, n_refits)`` and the ``seconds`` spent),
which later calls top up to the number of refits asked for. A regression's score is
:func:`test_score` (through :class:`Scored` for ``add_refits``).
"""

import time

import numpy as np


def test_score(model, X, y, declarations):
    """The released model's score on the test part: accuracy, or for a regression R² of the
    predictions clipped to the declared ``bounds_y`` (``declarations.y_bounds``, None for a
    classifier): public post-processing of the released model; without it a single wild DP
    coefficient makes R² arbitrarily negative."""
    if declarations.y_bounds is None:
        return float(model.score(X, y))
    from sklearn.metrics import r2_score

    return float(r2_score(y, np.clip(model.predict(X), *declarations.y_bounds)))


class Scored:
    """A model whose ``score`` is :func:`test_score` (for :func:`add_refits`)."""

    def __init__(self, model, declarations):
        self.model, self.declarations = model, declarations

    def fit(self, X, y):
        self.model.fit(X, y)
        return self

    def score(self, X, y):
        return test_score(self.model, X, y, self.declarations)


def add_refits(path, candidates, make_model, train, test, refits, rows=None):
    """Top the cache at ``path`` up to ``refits`` refits of every candidate; return ``path``.

    Parameters
    ----------
    path : pathlib.Path
        The ``.npz`` cache file (created with its folders if missing).
    candidates : list of dict
        Parameter settings, in the cache's row order.
    make_model : callable
        ``make_model(params)``: the unfitted DP model of one candidate, with its own
        accountant (the refits are measurements, never released).
    train, test : tuple of (X, y)
        The repetition's training and test parts.
    refits : int
        Refits per candidate wanted in the cache.
    rows : callable or None, default=None
        ``rows()``: the training rows of the next refit (for example a fresh random subset);
        None trains every refit on the whole training part.
    """
    existing = np.load(path) if path.exists() else None
    have = 0 if existing is None else existing["accuracy"].shape[1]
    if have >= refits:
        return path
    (X_train, y_train), (X_test, y_test) = train, test
    start = time.perf_counter()
    accuracy = np.empty((len(candidates), refits - have))
    for j in range(refits - have):
        subset = slice(None) if rows is None else rows()
        for i, params in enumerate(candidates):
            model = make_model(params).fit(X_train[subset], y_train[subset])
            accuracy[i, j] = model.score(X_test, y_test)
    seconds = time.perf_counter() - start
    if existing is not None:
        accuracy = np.hstack([existing["accuracy"], accuracy])
        seconds += float(existing["seconds"])
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, accuracy=accuracy, seconds=seconds)
    return path


def cached_refits(path):
    """How many refits per candidate the cache at ``path`` holds (0 if none)."""
    return np.load(path)["accuracy"].shape[1] if path.exists() else 0


def pooled(paths):
    """``(mean, standard error, n)`` per candidate of the refits cached at ``paths``."""
    accuracy = np.hstack([np.load(path)["accuracy"] for path in paths])
    n = accuracy.shape[1]
    return accuracy.mean(axis=1), accuracy.std(axis=1, ddof=1) / np.sqrt(n), n
