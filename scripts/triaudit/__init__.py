"""triaudit: run the GPU benchmark suite and turn its Google Benchmark JSON into tables and plots.

Data flows one way (see DESIGN.md): executables -> Google Benchmark JSON -> results/<card>/<run>/
-> load into one tidy table -> tables, plots.
"""

__version__ = "0.3.0"  # the same as ../../VERSION (scripts/tests/test_versions.py holds them together)
