"""Text columns kept as pandas categoricals: values computed per category, not per row."""

from __future__ import annotations

import numpy as np
import pandas as pd


def recode(codes: np.ndarray, per_category: list) -> pd.Categorical:
    """A categorical whose value for each row is per_category[its code] (None: missing; code -1
    stays missing), with sorted categories: a value per distinct name, not per row."""
    uniques = sorted({v for v in per_category if v is not None})
    where = {v: i for i, v in enumerate(uniques)}
    lut = np.array([where.get(v, -1) for v in per_category] + [-1], dtype=np.int64)
    return pd.Categorical.from_codes(lut[codes], categories=uniques)


def map_text(s: pd.Series, mapping: dict) -> pd.Series:
    """s.map(mapping) for a text column, categorical when s is: computed per category, not per row
    (missing where the mapping has no entry)."""
    if not isinstance(s.dtype, pd.CategoricalDtype):
        return s.map(mapping)
    new = recode(s.cat.codes.to_numpy(), [mapping.get(c) for c in s.cat.categories])
    return pd.Series(new, index=s.index)
