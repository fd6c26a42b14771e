"""Transformers that the refit gate can trust on the user's word."""

from sklearn.preprocessing import FunctionTransformer


class RowWiseFunctionTransformer(FunctionTransformer):
    """A :class:`~sklearn.preprocessing.FunctionTransformer` declared row-wise by its user.

    The refit gate (:mod:`skdptune.gate`) refuses a plain ``FunctionTransformer`` in a model
    that will be released, because nothing in its parameters says what ``func`` does:
    ``FunctionTransformer(lambda Z: Z - Z.mean(axis=0))`` centres every row with a mean of the
    private data, so one record moves every transformed row and the privacy of the steps after
    it no longer holds. Using this class instead is an explicit declaration, made by the user
    and not checked by the library, that ``func`` (and ``inverse_func``) compute each output row
    from the matching input row and public constants only (for example ``np.log1p``, a
    clip to declared bounds, or a fixed unit conversion). Such a transformer reads nothing from
    the data when fitted, so it needs no privacy budget.

    The parameters are those of :class:`~sklearn.preprocessing.FunctionTransformer`.

    Examples
    --------
    >>> import numpy as np
    >>> from skdptune.preprocessing import RowWiseFunctionTransformer
    >>> RowWiseFunctionTransformer(np.log1p).fit_transform(np.array([[0.0], [np.e - 1]]))
    array([[0.],
           [1.]])
    """
