"""Text columns kept as pandas categoricals: values computed per category, not per row."""

from __future__ import annotations

import numpy as np
import pandas as pd

# pandas 3 keeps text in Arrow arrays when pyarrow is installed (the results store, store/, needs
# pyarrow) and in Python objects otherwise. The tables were made fast with Python ones: with Arrow
# text, the gate's many small selections took half as long again (1,024 synthetic GPUs: 29.9 s
# against 19.5 s). Set here, where every table's text columns are made.
pd.set_option("mode.string_storage", "python")


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
