"""`triaudit gate --slurm-drain`: a failing node is taken out of service, a passing one put back,
through Slurm's own `scontrol`.

On a FAIL the node is drained with the reason "triaudit: <check> GPU <i> <measured> < <floor>"
(the first FAIL in the gate's order of checks, "+N more" after). On a later gate with no FAIL and nothing NOT TESTED, the
node is resumed, but only when the drain is triaudit's own (its reason starts with "triaudit:"): a
drain someone else set (maintenance, a broken fan) is left alone, and is not overwritten by
triaudit's reason either. A gate that could not test something changes nothing. Every scontrol call
has a timeout; what could not be done is said, never raised (the verdict stands).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass

from triaudit.judge.gate import GateResult
from triaudit.judge.gate_checks import FAIL, NOT_TESTED, PASS, WARN

REASON_PREFIX = "triaudit:"
TIMEOUT_S = 30
MAX_REASON = 200  # Slurm keeps reasons short in sinfo's columns; the gate's output has the rest


@dataclass
class NodeState:
    name: str
    state: str  # e.g. IDLE, IDLE+DRAIN, MIXED+DRAIN
    reason: str  # without Slurm's "[user@time]" suffix

    @property
    def drained(self) -> bool:
        return "DRAIN" in self.state.upper()

    @property
    def ours(self) -> bool:
        return self.reason.startswith(REASON_PREFIX)


def _scontrol(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("scontrol") or shutil.which("scontrol", path="/usr/bin:/usr/sbin:/bin:/sbin")
    if exe is None:
        raise OSError("scontrol not found (Slurm's client tools are not installed here)")
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=TIMEOUT_S)


def parse_show_node(text: str) -> NodeState | None:
    """`scontrol show node -o NAME` (one line) -> its name, state and reason."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    name = re.search(r"NodeName=(\S+)", line)
    state = re.search(r"\bState=(\S+)", line)
    if not name or not state:
        return None
    reason = re.search(r"\bReason=(.*)$", line)
    said = reason.group(1) if reason else ""
    # Later fields may follow the reason on newer Slurm; the reason ends at its "[user@time]".
    said = re.sub(r"\s*\[[^\]]*@[^\]]*\].*$", "", said).strip()
    if said in ("(null)", "none"):
        said = ""
    return NodeState(name.group(1), state.group(1), said)


def node_state(name: str) -> NodeState | None:
    """The node's state, trying its short name when Slurm does not know the full one."""
    for candidate in dict.fromkeys([name, name.split(".")[0]]):
        r = _scontrol("show", "node", "-o", candidate)
        if r.returncode == 0:
            st = parse_show_node(r.stdout)
            if st is not None:
                return st
    return None


def drain_reason(result: GateResult, host: str) -> str:
    fails = [v for v in result.verdicts if v.host == host and v.status == FAIL]
    first = fails[0]
    where = f" GPU {first.gpu}" if first.gpu else ""
    text = f"{REASON_PREFIX} {first.name}{where} {first.short or first.message}"
    if len(fails) > 1:
        text += f" (+{len(fails) - 1} more)"
    return text[:MAX_REASON]


def apply(result: GateResult, node_names: dict[str, str] | None = None) -> list[str]:
    """Drains failing nodes, resumes passing ones that triaudit drained; returns what was done
    (and what could not be), one line per node."""
    said = []
    for node in result.nodes:
        host = node.host
        name = (node_names or {}).get(host, host)
        status = result.node_status(host)
        try:
            st = node_state(name)
            if st is None:
                said.append(f"{host}: Slurm knows no node {name!r}: not drained or resumed")
                continue
            if status == FAIL:
                if st.drained and not st.ours:
                    said.append(f"{st.name}: FAIL, but drained already by someone else ({st.reason!r}): left alone")
                    continue
                reason = drain_reason(result, host)
                r = _scontrol("update", f"NodeName={st.name}", "State=DRAIN", f"Reason={reason}")
                said.append(
                    f"{st.name}: drained: {reason}"
                    if r.returncode == 0
                    else f"{st.name}: drain failed: {r.stderr.strip()}"
                )
            elif status in (PASS, WARN):
                if st.drained and st.ours:
                    r = _scontrol("update", f"NodeName={st.name}", "State=RESUME")
                    said.append(
                        f"{st.name}: resumed (triaudit's drain: {st.reason!r})"
                        if r.returncode == 0
                        else f"{st.name}: resume failed: {r.stderr.strip()}"
                    )
                elif st.drained:
                    said.append(f"{st.name}: passed; drained by someone else ({st.reason!r}): left alone")
            elif status == NOT_TESTED:
                said.append(f"{st.name}: something NOT TESTED: the node's Slurm state is left as it is ({st.state})")
        except (OSError, subprocess.SubprocessError) as exc:
            said.append(f"{host}: --slurm-drain: {exc}")
    return said
