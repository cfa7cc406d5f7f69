"""The gate's verdicts as JUnit XML, in the structure GitLab's and Jenkins' test reports read:
<testsuites> holding one <testsuite> per node, one <testcase> per GPU and check (its name: host,
GPU index, UUID, check). A FAIL is a <failure> whose *body* holds the measured figure, the floor
and where the floor came from (some consumers show only the body, not the message attribute);
NOT TESTED is <skipped> with the reason; PASS and WARN pass, the figure in <system-out> (a WARN
says so there: JUnit has no warning). Standard library only."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from triaudit.judge.gate_checks import FAIL, NOT_TESTED, WARN
from triaudit.judge.gate_verdict import Verdict

ROOT_NAME = "triaudit gate"  # how a file this command wrote is known again (it may replace it)


def _classname(host: str) -> str:
    # Jenkins reads the dots of a classname as packages: a host's FQDN stays one name.
    return "triaudit.gate." + re.sub(r"[^A-Za-z0-9_-]", "_", host)


def testcase_name(v: Verdict) -> str:
    if not v.gpu:
        return f"{v.host} node {v.name}"
    peer = f" -> GPU {v.peer} {v.peer_uuid}" if v.peer else ""
    return f"{v.host} GPU {v.gpu} {v.uuid}{peer} {v.name}"


def body(v: Verdict) -> str:
    lines = [f"{v.status}: {testcase_name(v)}", f"measured, floor: {v.message}"]
    if v.case:
        lines.append(f"case: {v.case}")
    if v.floor_source:
        lines.append(f"floor from: {v.floor_source}")
    if v.model:
        lines.append(f"model: {v.model}")
    return "\n".join(lines)


def junit_xml(verdicts: list[Verdict], run_names: dict[str, str]) -> str:
    root = ET.Element("testsuites", name=ROOT_NAME)
    hosts: dict[str, list[Verdict]] = {}
    for v in verdicts:
        hosts.setdefault(v.host, []).append(v)
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for host, vs in hosts.items():
        failures = sum(v.status == FAIL for v in vs)
        skipped = sum(v.status == NOT_TESTED for v in vs)
        suite = ET.SubElement(
            root,
            "testsuite",
            name=host,
            hostname=host,
            tests=str(len(vs)),
            failures=str(failures),
            errors="0",
            skipped=str(skipped),
            time="0",
        )
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="run", value=run_names.get(host, ""))
        said = sorted({v.provenance for v in vs if v.provenance})
        if said:  # synthetic figures say so where a CI system shows the suite
            ET.SubElement(props, "property", name="provenance", value=", ".join(said))
        for v in vs:
            case = ET.SubElement(suite, "testcase", classname=_classname(host), name=testcase_name(v), time="0")
            if v.status == FAIL:
                el = ET.SubElement(case, "failure", message=f"{v.name}: {v.short or v.message}", type="FAIL")
                el.text = body(v)
            elif v.status == NOT_TESTED:
                el = ET.SubElement(case, "skipped", message=f"NOT TESTED: {v.message}")
                el.text = body(v)
            else:
                out = ET.SubElement(case, "system-out")
                out.text = body(v) + ("\n(a WARN: the figure is inside the warning band)" if v.status == WARN else "")
        totals["tests"] += len(vs)
        totals["failures"] += failures
        totals["skipped"] += skipped
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failures"]))
    root.set("errors", "0")
    root.set("skipped", str(totals["skipped"]))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def written_by_gate(text: str) -> bool:
    """Whether a file is a JUnit report this command wrote (it may be replaced; nothing else is)."""
    return f'<testsuites name="{ROOT_NAME}"' in text[:400]
