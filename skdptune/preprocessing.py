"""Transformers that the refit gate can trust on the user's word."""

from ._preprocessing import RowWiseFunctionTransformer

__all__ = ["RowWiseFunctionTransformer"]
