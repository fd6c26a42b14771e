"""What a private selection can resolve, from public quantities only (no data).

:func:`forecast_selection` (and :meth:`PrivateGridSearchCV.forecast
<skdptune.PrivateGridSearchCV.forecast>`, for a configured search) return a :class:`Forecast`;
the search warns when its pairwise gap is above :data:`SWAMPED_GAP`.
"""

from ._forecast import CLEAR_LEAD, SWAMPED_GAP, Forecast, forecast_selection

__all__ = ["CLEAR_LEAD", "SWAMPED_GAP", "Forecast", "forecast_selection"]
