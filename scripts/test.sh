#!/usr/bin/env bash
# The test command (README): checks the house style (scripts/lint.sh), builds with the `ci` preset
# (explicit architecture list, no GPU needed), runs CTest (tests labelled `gpu` report "skipped"
# without a device), then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
# OpenMPI for the MPI build of triaudit_allreduce and its bootstrap test (CI installs it itself).
if ! dpkg -s libopenmpi-dev >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libopenmpi-dev openmpi-bin >/dev/null) ||
      echo "warning: OpenMPI could not be installed: the MPI build and its test are left out"
  else
    echo "warning: OpenMPI (libopenmpi-dev) missing and not root: the MPI build and its test are left out"
  fi
fi
# Slurm and munge for the one-node cluster that scripts/tests/test_slurm_cluster.py starts and stops
# itself (CI installs them itself); without them that test reports skipped.
if ! dpkg -s slurmctld slurmd slurm-client munge >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurmctld slurmd slurm-client munge >/dev/null) ||
      echo "warning: Slurm could not be installed: the Slurm cluster test reports skipped"
  else
    echo "warning: Slurm (slurmctld slurmd slurm-client munge) missing and not root: the Slurm cluster test reports skipped"
  fi
fi
# Chromium (headless) for scripts/tests/test_report_in_browser.py, which opens the report as a
# reader would (CI installs it itself); without it that test reports skipped.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) ||
      echo "warning: chromium could not be installed: the report's browser test reports skipped"
  else
    echo "warning: chromium missing and not root: the report's browser test reports skipped"
  fi
fi
# Prometheus' promtool and node_exporter, the real consumers of `triaudit gate --prom` in
# scripts/tests/test_gate_prometheus.py (CI installs them itself); without them that test reports skipped.
if ! dpkg -s prometheus prometheus-node-exporter >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus prometheus-node-exporter >/dev/null) ||
      echo "warning: Prometheus could not be installed: the gate's Prometheus test reports skipped"
  else
    echo "warning: Prometheus (prometheus prometheus-node-exporter) missing and not root: the gate's Prometheus test reports skipped"
  fi
fi
# Java (headless) for Spark in local mode, which scripts/tests/test_store_spark.py starts and stops
# itself to read the results store (CI installs it itself); without it that test reports skipped.
if ! command -v java >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jre-headless >/dev/null) ||
      echo "warning: Java could not be installed: the results store's Spark test reports skipped"
  else
    echo "warning: Java (default-jre-headless) missing and not root: the results store's Spark test reports skipped"
  fi
fi
# shellcheck source=scripts/python_env.sh
source scripts/python_env.sh
bash scripts/lint.sh
cmake --workflow --preset ci
TRIAUDIT_BUILD_DIR="$PWD/build/ci" python -m pytest scripts/tests -q
