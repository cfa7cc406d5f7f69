"""The fleet's outlier query in SQL, over the store's `tidy` dataset as it lies on disk: one text that
DuckDB, Spark SQL and Trino all run (tests/test_store_spark.py runs it on Spark in local mode and
holds its answer to DuckDB's), shown in docs/fleet.md.

What is pushed into SQL is only aggregation: each GPU's median over its files' medians of a case,
then per group (model, driver, case) the median and the median absolute deviation. Which counter a
case is judged on stays the Python rule of judge/outliers.py (results/counters.py JUDGED), given to
the query as a table `judged (case_name, metric, higher_better)`; so do which runs are read (a
command's paths, the newest version of each run). `triaudit outliers` runs the per-GPU part here and
judges in pandas (judge/outliers.py judge); tests hold the two row by row.

The median is written portably (no engine has the same median function: DuckDB interpolates as
`lo + (hi - lo) / 2`, Trino has only an approximate one): the middle rows by row_number, and the
half sum of the smallest and largest of them, `(a + b) / 2`, exactly what pandas computes.
"""

from __future__ import annotations

from triaudit.results.counters import JUDGED

KEYS = "model, driver, gpu, host, gpu_index, gpu_uuid, case_name, metric, higher_better"


def judged_sql(tidy: str = "tidy") -> str:
    """The counter each case is judged on, as `triaudit outliers` chooses it (results/counters.py
    JUDGED: the first of its order that the case's measured rows of one GPU's files report), for SQL
    readers that do not run triaudit: a table (case_name, metric, higher_better)."""
    values = ", ".join(f"('{m}', {i}, {'TRUE' if h else 'FALSE'})" for i, (m, h) in enumerate(JUDGED))
    return f"""(
    WITH preference AS (SELECT * FROM (VALUES {values}) AS p(metric, preference, higher_better)),
    present AS (
        SELECT DISTINCT t.case_name, p.metric, p.preference, p.higher_better
        FROM {tidy} t JOIN preference p ON t.metric = p.metric
        WHERE t.status = 'ok' AND t.per_gpu
    ),
    best AS (SELECT case_name, MIN(preference) AS preference FROM present GROUP BY case_name)
    SELECT p.case_name, p.metric, p.higher_better
    FROM present p JOIN best b ON p.case_name = b.case_name AND p.preference = b.preference
)"""


def _median(value: str, rank: str, count: str) -> str:
    """The median of `value` over a group whose rows are numbered `rank` (1..`count`, by value)."""
    middle = f"2 * {rank} IN ({count}, {count} + 1, {count} + 2)"
    return f"(MIN(CASE WHEN {middle} THEN {value} END) + MAX(CASE WHEN {middle} THEN {value} END)) / 2"


def per_gpu_sql(tidy: str = "tidy", judged: str = "judged") -> str:
    """Each GPU's figure per case: the median over its files of each file's median of the case's
    judged counter (rows that ran; files of one GPU: results/facts.py identity)."""
    return f"""
WITH per_file AS (
    SELECT t.model, t.driver, t.gpu, t.host, t.gpu_index, t.gpu_uuid, t.case_name, t.metric,
           j.higher_better, t.file, t.median
    FROM {tidy} t JOIN {judged} j ON t.case_name = j.case_name AND t.metric = j.metric
    WHERE t.status = 'ok' AND t.per_gpu
),
numbered AS (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY {KEYS} ORDER BY median) AS rn,
           COUNT(*) OVER (PARTITION BY {KEYS}) AS n
    FROM per_file
)
SELECT {KEYS}, {_median("median", "rn", "n")} AS value, COUNT(DISTINCT file) AS files
FROM numbered
GROUP BY {KEYS}
"""


def outliers_sql(
    threshold: float = 0.05, min_gpus: int = 4, k: float = 3.0, tidy: str = "tidy", judged: str = "judged"
) -> str:
    """The whole outlier rule (judge/outliers.py): a GPU is an outlier when its throughput (1/time
    for times) is more than `threshold` below its group's median and more than k robust standard
    deviations (1.4826 x MAD) below it, in a group of at least `min_gpus` GPUs."""
    group = "model, driver, case_name"
    return f"""
WITH per_gpu AS ({per_gpu_sql(tidy, judged)}),
throughput AS (
    SELECT *, CASE WHEN higher_better THEN value WHEN value <> 0 THEN 1.0 / value END AS throughput
    FROM per_gpu
),
numbered AS (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY {group} ORDER BY throughput NULLS LAST) AS rn,
           COUNT(throughput) OVER (PARTITION BY {group}) AS gpus
    FROM throughput
),
medians AS (
    SELECT {group}, {_median("throughput", "rn", "gpus")} AS group_median FROM numbered GROUP BY {group}
),
deviations AS (
    SELECT n.*, m.group_median, ABS(n.throughput - m.group_median) AS deviation
    FROM numbered n JOIN medians m
      ON n.model = m.model AND n.driver = m.driver AND n.case_name = m.case_name
),
numbered_deviations AS (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY {group} ORDER BY deviation NULLS LAST) AS rd FROM deviations
),
mads AS (
    SELECT {group}, {_median("deviation", "rd", "gpus")} AS mad FROM numbered_deviations GROUP BY {group}
)
SELECT d.model, d.driver, d.gpu, d.host, d.gpu_index, d.gpu_uuid, d.case_name, d.metric, d.higher_better,
       d.value, d.files, d.throughput, d.gpus, d.group_median, 1.4826 * m.mad AS robust_sigma,
       1.0 - d.throughput / d.group_median AS deficit,
       COALESCE(d.gpus >= {int(min_gpus)} AND 1.0 - d.throughput / d.group_median > {float(threshold)!r}
                AND d.group_median - d.throughput > {float(k)!r} * (1.4826 * m.mad), FALSE) AS outlier
FROM deviations d JOIN mads m ON d.model = m.model AND d.driver = m.driver AND d.case_name = m.case_name
"""


def fleet_outliers_sql(threshold: float = 0.05, min_gpus: int = 4, k: float = 3.0, tidy: str = "tidy") -> str:
    """The whole query on its own: the judged counters chosen in SQL (judged_sql), then outliers_sql.
    docs/fleet.md shows this text (scripts/docs_gen.py writes it there); Spark and DuckDB run it in
    tests/test_store_spark.py."""
    body = outliers_sql(threshold, min_gpus, k, tidy, "judged").strip()
    assert body.startswith("WITH ")
    return f"WITH judged AS {judged_sql(tidy)},\n{body[len('WITH ') :]}\n"
