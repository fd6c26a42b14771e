"""The search's view of a dask collection: its public shape, never its values.

The life cycle (``skdptune._base``) plans on ``X`` and ``y`` before touching them: it reads
``n`` (public under replace-one adjacency), the number of columns, their names and dtypes.
For dask input it gets an :class:`OnWorkers` of that shape and dtype instead, which holds no
data (a read-only zero-stride view of one value: NaN for ``X``, so that anything computing on
it by mistake fails or shows NaN rather than a plausible number). The steps that read the
data dispatch on it, each with one line at its own place in the life cycle:

- input validation (``skdptune._validation.check_input_data``): :meth:`OnWorkers.check`;
- partition and evaluate (``PrivateGridSearchCV._select``):
  :meth:`OnWorkers.partition_utilities`;
- the refit (``skdptune._dp_fit.fit``): :meth:`OnWorkers.refit`;
- the check of the released model (``skdptune._trivial.estimate_lead``):
  :meth:`OnWorkers.lead`.

This module imports nothing of dask or of the rest of the package at import time (the hooks
import it early); each method imports its implementation when called.
"""

import sys

import numpy as np


class OnWorkers(np.ndarray):
    """A stand-in with the shape and dtype of a dask array whose chunks stay on the workers.

    Built by :func:`stand_in` only; slices and views of it are plain stand-ins without a
    ``source`` and never reach the hooks.

    Attributes
    ----------
    source : dask.array.Array or None
        The data: ``X`` chunked by rows only, or ``y`` with the same row chunks.
    columns : ndarray of object, optional
        A data frame's column names (read by scikit-learn's ``_get_feature_names``).
    """

    def __array_finalize__(self, obj):
        self.source = None

    def check(self, y, estimator):
        """Input validation on the workers (``skdptune._distributed._input.check_data``)."""
        from ._input import check_data
        check_data(self, y, estimator)

    def partition_utilities(self, y, plan, search, partition_seed):
        """Every candidate's mean partition utility, the partitions dealt and fitted on the
        workers (``skdptune._distributed._evaluate.distributed_utilities``)."""
        from ._evaluate import distributed_utilities
        return distributed_utilities(self, y, plan, search, partition_seed)

    def refit(self, estimator, y):
        """Fit ``estimator`` for release from statistics reduced over the chunks
        (``skdptune._distributed._refit.refit``)."""
        from ._refit import refit
        return refit(estimator, self, y)

    def lead(self, kind, model, y):
        """The released model's mean lead over the trivial one
        (``skdptune._distributed._refit.lead``), not private: the caller adds the noise."""
        from ._refit import lead
        return lead(kind, model, self, y)


def stand_in(source, dtype, columns=None):
    """An :class:`OnWorkers` of ``source``'s shape and ``dtype``, holding ``source``."""
    fill = np.nan if np.dtype(dtype).kind == "f" else 0
    view = np.broadcast_to(np.array(fill, dtype=dtype), source.shape).view(OnWorkers)
    view.source = source
    if columns is not None:
        view.columns = np.asarray(columns, dtype=object)
    return view


def is_dask_collection(value):
    """Whether ``value`` is a dask collection (False when dask was never imported: then it
    cannot be one)."""
    dask = sys.modules.get("dask")
    return dask is not None and dask.is_dask_collection(value)
