"""The results store: an index of the JSON result folders, in Parquet, for the commands that read
many runs (gate, floors derive, outliers, history, report, figures). The folders stay the record;
the store is rebuilt from them (`triaudit store rebuild`), and a reader checks it against them
(source.py). Layout: layout.py; adding a run: ingest.py; reading: catalog.py, source.py, load.py;
the fleet's outlier query in SQL for DuckDB, Spark and Trino: sql.py; merging nights: compact.py.
docs/fleet.md has the commands, the figures and the queries.

Its wing lies between results/ (the tidy table it stores) and the commands' wings that read it
(judge, report): it imports results and core only.
"""
