"""The store's files are plain Hive-style Parquet: Spark reads them as they lie and answers the fleet's
outlier query (store/sql.py, the text docs/fleet.md shows) exactly as DuckDB does. Spark runs in
local mode, started and stopped by the test; without Java (scripts/test.sh installs
default-jre-headless) or pyspark (the test extra) the test reports skipped, saying which.
Made-up numbers (synthetic_store.py), not measurements."""

from __future__ import annotations

import math
import shutil

import pytest
import synthetic_store

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")


@pytest.fixture(scope="module")
def spark():
    if shutil.which("java") is None:
        pytest.skip("no Java on this machine (scripts/test.sh installs default-jre-headless): Spark cannot start")
    pyspark = pytest.importorskip("pyspark", reason="pyspark not installed (pip install -e 'scripts[test]')")
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[1]")
        .appName("triaudit-store-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "512m")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    del pyspark
    try:
        yield session
    finally:
        session.stop()


@pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas")
def test_spark_answers_the_outlier_query_as_duckdb_does(tmp_path, spark):
    from triaudit.judge import outliers as O
    from triaudit.store import compact
    from triaudit.store import source as S
    from triaudit.store.engine import connection, table
    from triaudit.store.layout import STORE_DIR
    from triaudit.store.sql import fleet_outliers_sql, judged_sql

    root = synthetic_store.fleet(tmp_path / "fleet")
    compact.rebuild(root)
    tidy = root / STORE_DIR / "tidy"
    # The counter each case is judged on: outliers' own rule, from the table (as `triaudit outliers` decides it).
    per, _ = O.per_gpu_table(S.JsonSource([root]).rs)
    judged = sorted({(c, m, bool(h)) for c, m, h in zip(per["case"], per["metric"], per["higher_better"])})
    query = fleet_outliers_sql(threshold=0.05, min_gpus=4, k=3.0)  # as docs/fleet.md shows it

    con = connection()
    con.sql(
        f"CREATE OR REPLACE TEMP VIEW tidy AS SELECT * FROM read_parquet('{tidy}/*/*/*.parquet', hive_partitioning=true)"
    )
    duck = table(query).to_pylist()

    spark.read.parquet(str(tidy)).createOrReplaceTempView("tidy")
    sparks = [r.asDict() for r in spark.sql(query).collect()]

    def keyed(rows):
        return {(r["gpu"], r["case_name"]): r for r in rows}

    d, s = keyed(duck), keyed(sparks)
    assert d.keys() == s.keys() and len(d) > 50
    # The judged counters chosen in SQL (for readers without triaudit) are outliers' own, in both engines.
    in_spark = {tuple(r) for r in spark.sql(f"SELECT * FROM {judged_sql()} AS j").collect()}
    in_duck = {
        (r["case_name"], r["metric"], r["higher_better"])
        for r in table(f"SELECT * FROM {judged_sql()} AS j").to_pylist()
    }
    assert in_spark == in_duck == set(judged)
    for key, a in d.items():
        b = s[key]
        for c in ("value", "throughput", "group_median", "robust_sigma", "deficit"):
            x, y = a[c], b[c]
            assert (x is None and y is None) or x == y or (math.isnan(x) and math.isnan(y)), (key, c, x, y)
        assert (a["outlier"], a["gpus"], a["files"], a["host"]) == (b["outlier"], b["gpus"], b["files"], b["host"])
    assert sum(a["outlier"] for a in d.values()) >= 1  # the slow GPU of synthetic_store's fleet is named
