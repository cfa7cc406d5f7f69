"""One verdict of the gate (a GPU, or a node, and a check) and how a measured figure is held
against a floor. Standard library only."""

from __future__ import annotations

from dataclasses import dataclass, field

from triaudit.judge.gate_checks import CHECKS, FAIL, PASS, WARN, fmt


@dataclass
class Verdict:
    host: str
    gpu: str  # nvidia-smi's index; "" for a node's check (a collective)
    uuid: str
    model: str
    check: str  # a CHECKS or ENVIRONMENT key
    status: str  # PASS, WARN, FAIL, NOT TESTED
    message: str  # one line: what was measured against what, or why it was not tested
    link: str = ""  # p2p: the link type (NV18, PIX, ...)
    measured: float | None = None  # base units
    fail: float | None = None
    warn: float | None = None
    floor_source: str = ""  # the SKU entry and the floor's provenance, in words
    case: str = ""
    peer: str = ""  # p2p: the destination GPU's index
    peer_uuid: str = ""
    sku: str = ""
    short: str = ""  # a drain reason's words: "2,410 GB/s < 2,673 GB/s"
    counts: dict = field(default_factory=dict)  # health: each counter's events over the run
    provenance: str = ""  # "synthetic" when the figures judged are not measurements ("" measured)

    @property
    def name(self) -> str:
        """The check as people read it: "hbm", "p2p NV18"."""
        return f"{self.check} {self.link}" if self.link else self.check

    def where(self) -> str:
        if not self.gpu:
            return f"{self.host} (node)"
        peer = f" -> GPU {self.peer} ({self.peer_uuid})" if self.peer else ""
        return f"{self.host} GPU {self.gpu} ({self.uuid}){peer}"


def judge_figure(value: float, check: str, fail: float, warn: float) -> str:
    """PASS, WARN or FAIL for a figure of `check` against its floor (a ceiling for times)."""
    if CHECKS[check].higher_better:
        return FAIL if value < fail else WARN if value < warn else PASS
    return FAIL if value > fail else WARN if value > warn else PASS


def figure_message(value: float, check: str, fail: float, warn: float, how: str) -> str:
    """The message of a judged figure: what was measured, how, and the floor."""
    side = "below" if CHECKS[check].higher_better else "above"
    return f"{fmt(value, check)} ({how}); FAIL {side} {fmt(fail, check)}, WARN {side} {fmt(warn, check)}"


def drain_words(value: float, check: str, status: str, fail: float, warn: float) -> str:
    """The figure against the bound it crossed, as a drain reason says it: "2,410 GB/s < 2,673 GB/s"."""
    higher = CHECKS[check].higher_better
    bound = fail if status == FAIL else warn
    crossed = status in (FAIL, WARN)
    return f"{fmt(value, check)} {('<' if higher else '>') if crossed else 'vs'} {fmt(bound, check)}"
