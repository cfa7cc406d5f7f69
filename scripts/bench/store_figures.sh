#!/bin/bash
# The results store's figures in docs/fleet.md: each command timed against 0.3.0 in the same run,
# interleaved (interleave.py), on synthetic fleets (never measurements). Not a test; about 25 minutes
# on 2 cores, most of it 0.3.0's gate over 8,192 GPUs. Keep the machine otherwise quiet:
#
#   git worktree add /tmp/v030 v0.3.0 && (cd /tmp/v030 && source scripts/python_env.sh)
#   git worktree add --detach /tmp/store-code HEAD      # the code timed stays put while you edit
#   B=scripts/bench; PY=.venv/bin/python; D=/tmp/store-bench; mkdir -p $D   # about 12 GB in all
#   $PY $B/make_synthetic_fleet.py $D/g1024 --hosts 128               && $PY -m triaudit store rebuild $D/g1024
#   $PY $B/make_synthetic_fleet.py $D/g8192 --hosts 1024              && $PY -m triaudit store rebuild $D/g8192
#   $PY $B/make_synthetic_fleet.py $D/f128x30 --hosts 16 --nights 30  && $PY -m triaudit store rebuild $D/f128x30
#   $PY $B/make_synthetic_fleet.py $D/hx365 --hosts 1 --nights 365    && $PY -m triaudit store rebuild $D/hx365
#   $PY $B/make_synthetic_fleet.py $D/h365 --hosts 1 --gpus 1 --nights 365 --single && $PY -m triaudit store rebuild $D/h365
#   $PY $B/make_synthetic_fleet.py $D/g8192x30 --hosts 1024 --nights 30 --link-nights
#   $PY -m triaudit store update $D/g8192x30/nvidia-h100-80gb-hbm3/20261101T*   # the first night only, then:
#   $PY $B/clone_store_nights.py $D/g8192x30 --first 20261101T020000Z --check 4
#   nice flock /tmp/triaudit-heavy.lock bash scripts/bench/store_figures.sh $D /tmp/v030 /tmp/store-code | tee $D/figures.log
set -euo pipefail
D=$(realpath "$1")          # the fleets above
OLD=$(realpath "$2")        # 0.3.0's checkout, with its own .venv
NEW=$(realpath "$3")        # the checkout timed (its scripts/), run with this checkout's .venv
HERE=$(cd "$(dirname "$0")" && pwd)
PY="$(cd "$HERE/../.." && pwd)/.venv/bin/python"  # not realpath: the link is what makes it the venv
cd "$D"
IL=("$PY" "$HERE/interleave.py" --checkout "v030=$OLD/scripts:$OLD/.venv/bin/python" --checkout "store=$NEW/scripts:$PY")
ALONE=("$PY" "$HERE/interleave.py" --checkout "1-night=$NEW/scripts:$PY" --checkout "30-nights=$NEW/scripts:$PY")
row() { echo "### $1"; uptime; shift; "$@"; echo; }
row "gate, 1,024 GPUs, 1 night" "${IL[@]}" --data g1024 --command 'gate {data}' --rounds 3
row "outliers, 1,024 GPUs, 1 night" "${IL[@]}" --data g1024 --command 'outliers {data}' --rounds 3
row "floors derive, 128 GPUs, 30 nights" "${IL[@]}" --data f128x30 \
    --command 'floors derive {data} --out {out}/f.toml --fleet synthetic' --rounds 3
row "history, 1 GPU, 365 nights" "${IL[@]}" --data h365/nvidia-h100-80gb-hbm3 --command history --rounds 3
row "gate, 1 host (8 GPUs), 365 nights" "${IL[@]}" --data hx365 --command 'gate {data}' --rounds 3
row "report, 1,024 GPUs, 1 night" "${IL[@]}" --data g1024 --command 'report {data} --out {out}/rep' --rounds 2
row "outliers, 8,192 GPUs, 1 night" "${IL[@]}" --data g8192 --command 'outliers {data}' --rounds 2
row "gate, 8,192 GPUs, 1 night" "${IL[@]}" --data g8192 --command 'gate {data}' --rounds 2
# One checkout, two folders: the same night alone, and as the newest of 30.
row "gate from the store: 8,192 GPUs, 1 night against 30 nights in the folder" \
    "${ALONE[@]}" --data g8192 --data-of 30-nights=g8192x30 --command 'gate {data}' --rounds 5
echo "### the store's cost when run writes"
$PY "$HERE/store_ingest_cost.py" "$NEW/scripts" g1024 h365
echo BENCH-DONE
