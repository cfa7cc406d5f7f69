"""The soak's SDC comparison (soak/sdc.py) on synthetic hash streams (hash logs written in the
executable's format from the Python reference of the hash; not measurements): a single flipped
bit in one GPU's tile at hour 3 is exactly one event naming that GPU, hour and tile."""

from __future__ import annotations

import synthetic_soak as S
from soak_hash_reference import combined

from triaudit.soak.events import ERROR, SDC, Tile
from triaudit.soak.hashlog import read_hash_log
from triaudit.soak.sdc import GpuHashes, find_sdc

START = 1_767_225_600.0  # 2026-01-01T00:00:00Z
WINDOW_S = 600.0  # ten-minute windows: 36 over six hours
WINDOWS = 36


def uuid(i: int) -> str:
    return f"GPU-5a4e7e7e-0000-0000-0000-00000000000{i}"


def stream(tmp_path, i: int, name: str = S.H200, golden=None, deviations=None, restarts=(), error_at=None) -> GpuHashes:
    """GPU i's hash log over the soak, written and read back; deviations: window -> {load: [...]}."""
    records = [S.reference_record(uuid(i), START + 30, 0, golden, name)]
    last = combined(golden or S.golden_tiles())  # what the device compares each window with
    for w in range(WINDOWS):
        for first, tiles in restarts:
            if first == w:
                records.append(S.reference_record(uuid(i), START + w * WINDOW_S + 5, w, tiles, name))
                last = combined(tiles)
        start, end = START + w * WINDOW_S, START + (w + 1) * WINDOW_S
        err = "cudaErrorIllegalAddress" if error_at is not None and w >= error_at else ""
        records.append(S.window_record(w, start, end, deviations=(deviations or {}).get(w), error=err, gemm_hash=last))
    log = read_hash_log(S.write_lines(tmp_path / f"triaudit_soak.gpu{i}.synthetic.json.hashes", records))
    return GpuHashes(uuid(i), str(i), name, log.references, log.windows)


def test_clean_streams_have_no_event(tmp_path):
    assert find_sdc([stream(tmp_path, i) for i in range(4)], START) == []


def test_one_flipped_bit_at_hour_3_is_one_event_naming_the_gpu_the_hour_and_the_tile(tmp_path):
    golden = S.golden_tiles()
    tile, bit, window = 3, 7, 18  # window 18 of ten minutes: hour 3
    when = START + window * WINDOW_S + 120
    dev = S.deviation(
        5321, when, tile, S.flipped_tile_hash(tile, bit), golden[tile], "tile 3: 1 of 1024 elements differ"
    )
    streams = [stream(tmp_path, i, deviations={window: {"gemm": [dev]}} if i == 2 else None) for i in range(4)]
    events = find_sdc(streams, START)
    assert len(events) == 1
    [e] = events
    assert (e.kind, e.gpu_uuid, e.gpu_index, e.window, e.case) == (SDC, uuid(2), "2", window, S.GEMM_CASE)
    assert e.time_unix == when and round(e.hour, 2) == 3.03
    assert e.tiles == (Tile(3, 32, 32, 32, 32),)
    assert "1 of 100 GEMMs in the window differed from the first output" in e.detail
    assert "4 of the model's 4 GPUs computed tile 3 as this GPU expected" in e.detail
    assert "tile 3: 1 of 1024 elements differ" in e.detail  # the FP64 reference's diagnosis, carried
    line = e.describe()
    assert line.startswith(f"SDC on GPU 2 ({uuid(2)}) at 2026-01-01T03:02:00Z (hour 3.03, window 18)")
    assert "tile 3 (rows 32-63, cols 32-63)" in line


def test_a_gpu_whose_golden_output_differs_from_the_models_is_named_once(tmp_path):
    golden = S.golden_tiles()
    bad = list(golden)
    bad[1] = S.flipped_tile_hash(1, 0)
    streams = [stream(tmp_path, i, golden=bad if i == 3 else None) for i in range(4)]
    [e] = find_sdc(streams, START)
    assert (e.gpu_uuid, e.window, e.tiles) == (uuid(3), 0, (Tile(1, 32, 32, 0, 32),))
    assert "differs in 1 of 4 tiles from the output the other 3 GPU(s) of the model agree on" in e.detail


def test_two_gpus_that_disagree_with_no_majority_are_both_named(tmp_path):
    bad = list(S.golden_tiles())
    bad[0] = S.flipped_tile_hash(0, 15)
    events = find_sdc([stream(tmp_path, 0), stream(tmp_path, 1, golden=bad)], START)
    assert sorted(e.gpu_uuid for e in events) == [uuid(0), uuid(1)]
    assert all(e.tiles == (Tile(0, 0, 32, 0, 32),) and "no majority" in e.detail for e in events)


def test_a_restart_whose_first_output_differs_is_one_event_at_the_restart(tmp_path):
    bad = list(S.golden_tiles())
    bad[2] = S.flipped_tile_hash(2, 3)
    streams = [stream(tmp_path, i, restarts=[(20, bad)] if i == 1 else ()) for i in range(3)]
    [e] = find_sdc(streams, START)
    assert (e.gpu_uuid, e.window, e.tiles[0].tile) == (uuid(1), 20, 2)
    assert "after a restart its first output differs in 1 of 4 tiles from the model's" in e.detail


def test_a_single_gpu_restart_is_judged_against_its_golden_output(tmp_path):
    bad = list(S.golden_tiles())
    bad[2] = S.flipped_tile_hash(2, 3)
    [e] = find_sdc([stream(tmp_path, 0, restarts=[(12, bad)])], START)
    assert e.window == 12 and "from its golden output of 2026-01-01T00:00:30Z" in e.detail


def test_other_models_are_not_compared_and_copies_are_judged_too(tmp_path):
    other = list(S.golden_tiles())
    other[0] ^= 1  # another model may compute other bits: not an event
    dev = S.deviation(77, START + 700, 5, 0xAB, 0xCD, "")
    streams = [
        stream(tmp_path, 0),
        stream(tmp_path, 1),
        stream(tmp_path, 2, name="NVIDIA H100 80GB HBM3", golden=other, deviations={1: {"h2d": [dev]}}),
    ]
    [e] = find_sdc(streams, START)
    assert (e.gpu_uuid, e.case, e.window, e.tiles[0].tile) == (uuid(2), S.COPY_CASES["h2d"], 1, 5)
    assert "1 of 100 host-to-device copies in the window differed" in e.detail


def test_a_load_that_stopped_is_one_error_however_many_windows_say_it(tmp_path):
    events = find_sdc([stream(tmp_path, 0, error_at=30)], START)
    assert [(e.kind, e.window) for e in events] == [(ERROR, 30)]
    assert "the load stopped: cudaErrorIllegalAddress" in events[0].detail
