"""The regression gate: compare a current run with a baseline, deterministic metrics strictly, timings with noise in mind.

Deterministic metrics (bytes and files written and removed, rows changed, every engine's answers and whether it
can read each configuration at all) are the same for the same
data, seed and versions: every change is reported; changed answers, or bytes/files growing beyond
``byte_tolerance``, fail. Timings fail only when the median slowed down by more than ``threshold`` *and* the
95% bootstrap intervals of the two medians do not overlap, on at least ``MIN_ROUNDS`` rounds each (shared CI
runners are noisy; two rounds cannot tell a regression from a busy machine). A metric the baseline did not record
yet is "new", never a failure. A configuration that passed in the baseline and fails now fails the gate; two runs
with no measured benchmark in common are not comparable (their own exit code, not a pass).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench.core import uncertainty
from bench.results.contract import Run

MIN_ROUNDS = 3  # fewer rounds than this cannot tell a slowdown from a busy machine

# (label, path into extra_info) of the metrics that must not drift for the same data, seed and versions
DETERMINISTIC = (
    ("data bytes written", ("filesystem", "data", "bytes_added")),
    ("data files written", ("filesystem", "data", "files_added")),
    ("delete/DV bytes written", ("filesystem", "delete", "bytes_added")),
    ("delete/DV files written", ("filesystem", "delete", "files_added")),
    ("log bytes written", ("filesystem", "log", "bytes_added")),
    ("log files written", ("filesystem", "log", "files_added")),
    ("data files removed (metadata)", ("metadata", "data_files_removed")),
    ("delete files removed (metadata)", ("metadata", "delete_files_removed")),
    ("rows changed (format)", ("metadata", "rows_changed")),
    ("rows changed (verified)", ("rows_changed_verified",)),
    ("row count", ("row_count",)),
)


@dataclass
class Finding:
    benchmark: str
    metric: str
    baseline: Any
    current: Any
    verdict: str  # "fail" | "changed" | "new" | "ok"
    note: str = ""


ORDER = {"fail": 0, "changed": 1, "new": 2, "ok": 3}


@dataclass
class Comparison:
    findings: list[Finding] = field(default_factory=list)
    compared: int = 0  # benchmarks measured in both runs
    why_incomparable: str = ""

    @property
    def comparable(self) -> bool:
        return self.compared > 0

    @property
    def failed(self) -> list[Finding]:
        return [f for f in self.findings if f.verdict == "fail"]

    @property
    def changed(self) -> list[Finding]:
        return [f for f in self.findings if f.verdict == "changed"]

    def text(self) -> str:
        lines = [f"{'verdict':<8} {'benchmark':<44} {'metric':<32} {'baseline':>14} {'current':>14}  note"]
        for f in sorted(self.findings, key=lambda f: (ORDER[f.verdict], f.benchmark)):
            if f.verdict != "ok":
                lines.append(f"{f.verdict.upper():<8} {f.benchmark:<44} {f.metric:<32} {_fmt(f.baseline):>14} {_fmt(f.current):>14}  {f.note}")
        ok = sum(1 for f in self.findings if f.verdict == "ok")
        new = sum(1 for f in self.findings if f.verdict == "new")
        lines.append(f"{len(self.failed)} failed, {len(self.changed)} changed, {new} new, {ok} unchanged "
                     f"({self.compared} benchmarks in both runs)")
        return "\n".join(lines)

    def markdown(self, baseline: Run, current: Run) -> str:
        verdict = "REGRESSION" if self.failed else "OK" if self.comparable else "NOTHING TO COMPARE"
        head = (f"### cowmor: {current.run_id} vs {baseline.run_id}\n\n"
                f"**{verdict}** — {len(self.failed)} failed, {len(self.changed)} changed, {self.compared} compared\n\n")
        rows = [f for f in self.findings if f.verdict != "ok"]
        if not rows:
            return head + "No change in bytes, files, rows or answers; no timing regression.\n"
        table = "| verdict | benchmark | metric | baseline | current | note |\n|---|---|---|---|---|---|\n"
        table += "".join(f"| {f.verdict} | `{f.benchmark}` | {f.metric} | {_fmt(f.baseline)} | {_fmt(f.current)} | {f.note} |\n" for f in rows)
        return head + table


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return "–" if value is None else str(value)


def _dig(data: dict, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def _answers(x: dict) -> dict[str, Any]:
    """Per read and engine: (rows, answer correct), or ``unsupported`` with the engine's reason."""
    out: dict[str, Any] = {}
    for phase in ("reads_before", "reads_after", "reads_after_compaction"):
        for query, r in (x.get(phase) or {}).items():
            out[f"{phase}.{query}"] = (r.get("rows"), r.get("answer_ok"))
            for engine, e in (r.get("engines") or {}).items():
                out[f"{phase}.{query}@{engine}"] = ("unsupported", e["unsupported"]) if "unsupported" in e else \
                    (e.get("rows"), e.get("answer_ok"))
    if "answers_verified" in x:
        out["answers_verified"] = x["answers_verified"]
    return out


def _answer_verdict(baseline: Any, current: Any) -> tuple[str, str]:
    """Same answer: ok. A read (or engine) new in the current run, or an engine that now reads what it could not:
    changed. Anything else (a lost read, a different answer, an engine that stopped reading): fail."""
    if baseline == current:
        return "ok", ""
    if baseline is None:
        return "new", "new in the current run"
    if isinstance(baseline, tuple) and baseline[0] == "unsupported" and not (isinstance(current, tuple) and current[0] == "unsupported"):
        return "changed", "the engine now reads this configuration"
    return "fail", "answers differ" if current is not None else "read missing from the current run"


def compare(baseline: Run, current: Run, threshold: float = 0.25, byte_tolerance: float = 0.02) -> Comparison:
    result = Comparison()
    base = {r.name: r for r in baseline.records()}
    cur = {r.name: r for r in current.records()}
    for name in sorted(set(base) - set(cur)):
        result.findings.append(Finding(name, "measured", "yes", "no", "fail", "missing from the current run"))
    for name in sorted(set(cur) - set(base)):
        result.findings.append(Finding(name, "measured", "no", "yes", "new", "new in the current run"))
    _compare_outcomes(baseline, current, result)
    result.compared = len(set(base) & set(cur))
    if not result.compared:
        result.why_incomparable = (f"no benchmark was measured in both runs ({len(base)} in {baseline.run_id}, "
                                   f"{len(cur)} in {current.run_id})")
    for name in sorted(set(base) & set(cur)):
        bx, cx = base[name].info, cur[name].info
        for label, path in DETERMINISTIC:
            b, c = _dig(bx, path), _dig(cx, path)
            if b == c:
                result.findings.append(Finding(name, label, b, c, "ok"))
            elif b is None:
                result.findings.append(Finding(name, label, b, c, "new", "not recorded in the baseline"))
            elif isinstance(b, (int, float)) and isinstance(c, (int, float)) and c <= b * (1 + byte_tolerance):
                result.findings.append(Finding(name, label, b, c, "changed", f"{(c / b - 1) if b else 0:+.1%}"))
            else:
                growth = f"{(c / b - 1):+.1%}" if isinstance(b, (int, float)) and isinstance(c, (int, float)) and b else ""
                result.findings.append(Finding(name, label, b, c, "fail", f"deterministic metric changed {growth}".strip()))
        ba, ca = _answers(bx), _answers(cx)
        for key in sorted(set(ba) | set(ca)):
            verdict, note = _answer_verdict(ba.get(key), ca.get(key))
            result.findings.append(Finding(name, f"answer {key}", ba.get(key), ca.get(key), verdict, note))
        verdict, note = _timing_verdict(base[name].stats, cur[name].stats, threshold)
        result.findings.append(Finding(name, "median seconds", base[name].stats["median"], cur[name].stats["median"],
                                       verdict, note))
    return result


def _compare_outcomes(baseline: Run, current: Run, result: Comparison) -> None:
    """A test that passed in the baseline and fails (or errors) now fails the gate, measured or not."""
    def key(o: dict[str, Any]) -> str:
        return str(o.get("nodeid") or f"{o.get('test')}[{o.get('config_id')}]")
    before = {key(o): o for o in baseline.outcomes}
    for o in current.outcomes:
        was = before.get(key(o))
        if o.get("outcome") == "failed" and (was is None or was.get("outcome") != "failed"):
            result.findings.append(Finding(key(o), "outcome", was.get("outcome") if was else None, "failed", "fail",
                                           str(o.get("reason") or "")[:200]))


def _timing_verdict(bs: dict, cs: dict, threshold: float) -> tuple[str, str]:
    """Slower by more than ``threshold`` with the 95% intervals of the two medians apart, on at least MIN_ROUNDS
    rounds each: fail. Slower but overlapping, or too few rounds to tell: changed (listed, never failed)."""
    ratio = cs["median"] / bs["median"] if bs["median"] else 1.0
    if ratio - 1 <= threshold:
        return "ok", f"{ratio - 1:+.0%}"
    b, c = (uncertainty.describe(s.get("data") or [s["median"]]) for s in (bs, cs))
    if min(b["n"], c["n"]) < MIN_ROUNDS:
        return "changed", f"{ratio - 1:+.0%} slower; too few rounds to decide (n={b['n']} vs {c['n']}, need {MIN_ROUNDS})"
    interval = f"95% CI [{c['ci95'][0]:.3g}, {c['ci95'][1]:.3g}] vs [{b['ci95'][0]:.3g}, {b['ci95'][1]:.3g}]"
    if c["ci95"][0] > b["ci95"][1]:
        return "fail", f"{ratio - 1:+.0%} slower; {interval}: the intervals do not overlap"
    return "changed", f"{ratio - 1:+.0%} slower, within noise ({interval} overlap)"
