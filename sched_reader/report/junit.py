"""Lint result -> JUnit XML (Jenkins, GitLab and Azure test tabs).

One ``<testsuite>`` per input file, one ``<testcase>`` per engine. An engine with findings at or above
``--fail-on`` gets one ``<failure>`` (JUnit allows one per testcase) whose message names the rules and
whose body lists every failing finding with its location and fix; findings below the threshold go to
``<system-out>``. Findings about the file itself (SR001) are a testcase named ``(file)``; a skipped
file (no vLLM engine in a directory walk, or ``# sched-reader: ignore-file``) is a testcase with
``<skipped>``. No timestamps or durations: the same run gives the same bytes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from sched_reader.findings import SEVERITY_RANK, Finding
from sched_reader.report.findings_text import LintReport, location, rule_name, sort_unique

# Characters XML 1.0 forbids (control characters other than tab, newline, carriage return).
_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _x(text: str) -> str:
    return _BAD_XML.sub("\ufffd", text)


def _line(f: Finding) -> str:
    name = rule_name(f.rule)
    label = f"{f.rule} {name}" if name else f.rule
    text = f"{location(f)}: {f.severity} {label}: {f.message}"
    if f.fix:
        text += f"\n    fix: {f.fix}"
    return text


def _testcase(suite: ET.Element, name: str, classname: str, file: str, line: int | None,
              findings: list[Finding], report: LintReport) -> int:
    """Add one testcase; returns 1 when it fails, else 0."""
    attrs = {"name": _x(name), "classname": _x(classname), "file": _x(file)}
    if line:
        attrs["line"] = str(line)
    case = ET.SubElement(suite, "testcase", attrs)
    failing = [f for f in findings if report.fails(f)]
    passing = [f for f in findings if not report.fails(f)]
    if failing:
        worst = max(failing, key=lambda f: SEVERITY_RANK[f.severity]).severity
        rules = sorted({f.rule for f in failing})
        n = len(failing)
        msg = f"{n} finding{'s' if n != 1 else ''} at or above {report.fail_on}: {', '.join(rules)}"
        fail = ET.SubElement(case, "failure", {"message": _x(msg), "type": worst})
        fail.text = _x("\n".join(_line(f) for f in failing))
    if passing:
        out = ET.SubElement(case, "system-out")
        out.text = _x("\n".join(_line(f) for f in passing))
    return 1 if failing else 0


def render_junit(report: LintReport) -> str:
    root = ET.Element("testsuites", {"name": "sched-reader lint"})
    total = total_fail = total_skip = 0
    for fr in report.files:
        suite = ET.SubElement(root, "testsuite", {"name": _x(fr.file)})
        tests = failures = skipped = 0
        if fr.skipped is not None:
            case = ET.SubElement(suite, "testcase", {"name": "(file)", "classname": _x(fr.file), "file": _x(fr.file)})
            ET.SubElement(case, "skipped", {"message": _x(fr.skipped)})
            tests, skipped = 1, 1
        if fr.findings:
            fl = _testcase(suite, "(file)", fr.file, fr.file, None, sort_unique(fr.findings), report)
            tests += 1
            failures += fl
        for e in fr.engines:
            fl = _testcase(suite, e.name, fr.file, fr.file, e.line, sort_unique(e.findings), report)
            tests += 1
            failures += fl
        suite.set("tests", str(tests))
        suite.set("failures", str(failures))
        suite.set("errors", "0")
        suite.set("skipped", str(skipped))
        total, total_fail, total_skip = total + tests, total_fail + failures, total_skip + skipped
    total_err = 0
    for path, message in report.failures:  # an input that could not be read: a JUnit <error>
        suite = ET.SubElement(root, "testsuite", {"name": _x(path), "tests": "1", "failures": "0", "errors": "1",
                                                  "skipped": "0"})
        case = ET.SubElement(suite, "testcase", {"name": "(file)", "classname": _x(path), "file": _x(path)})
        ET.SubElement(case, "error", {"message": _x(message)})
        total, total_err = total + 1, total_err + 1
    root.set("tests", str(total))
    root.set("failures", str(total_fail))
    root.set("errors", str(total_err))
    root.set("skipped", str(total_skip))
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
