"""The Energy section's choice of STREAM triad rows, computed column-wise, against the loop over
(card, type) groups it replaced (kept here as the reference), on random synthetic tables that hit
every branch: a sustained pair, burst only for fp32 and for other types, a sustained case without
a size, several sizes, cards and types out of order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from triaudit.report import frames as F
from triaudit.report.sections import energy as E


def _reference(s: pd.DataFrame) -> pd.DataFrame:
    keep = []
    for (_card, typ), grp in s.groupby(["card", "variant"]):
        held = grp[grp["op"] == "triad_sustained"]
        burst = grp[grp["op"] == "triad"]
        if held.empty and typ != "fp32":
            continue
        size = held["bytes"].max() if not held.empty else burst["bytes"].max()
        keep.append(grp[grp["bytes"] == size])
    return pd.concat(keep) if keep else s.iloc[0:0]


def _synthetic_stream_rows(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(int(rng.integers(1, 60))):
        card = f"synthetic card {int(rng.integers(0, 4))}"
        typ = str(rng.choice(["fp32", "fp64", "bf16"]))
        op = str(rng.choice(["triad", "triad_sustained", "copy"]))
        cache = str(rng.choice(["cold", "cold", "hot"]))
        nbytes = float(rng.choice([2**20, 2**28, 2**30, np.nan]))
        rows.append(
            {
                "card": card,
                "variant": typ,
                "op": op,
                "cache": cache,
                "bytes": nbytes,
                "file": f"synthetic_{card}.json",
                "case": f"stream/{op}/{typ}/cache:{cache}/bytes:{nbytes}",
                "median": float(rng.uniform(1e12, 4e12)),
            }
        )
    return pd.DataFrame(rows)


@pytest.mark.parametrize("seed", range(200))
def test_triad_rows_chosen_as_the_group_loop_chose_them(seed, monkeypatch):
    s = _synthetic_stream_rows(seed)
    monkeypatch.setattr(F, "metric", lambda df, corner, name: s.copy() if corner == "stream" else pd.DataFrame())
    monkeypatch.setattr(E, "_measures", lambda df, rows: {})
    got = E.burst_sustained_frame(pd.DataFrame({"case": []}))
    cold = s[(s["cache"] == "cold") & s["op"].isin(["triad", "triad_sustained"])]
    want = _reference(cold)
    if want.empty:
        assert got.empty
        return
    assert got["case"].tolist() == want["case"].tolist()
    assert got["card"].tolist() == want["card"].tolist()
    assert got["median"].tolist() == want["median"].tolist()
    assert set(got["kind"]) == {"stream"} and got["name"].tolist() == want["variant"].tolist()
