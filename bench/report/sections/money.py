"""The cost view: measured requests, bytes retained and seconds turned into money per workload profile, beside the
time-based recommendation. Only for runs on an object store (requests counted).

A price sheet is a parameter (``--prices "put=0.005,get=0.0004,…"``); its defaults are stated as such: AWS S3
Standard list prices in us-east-1 (per 1,000 requests: PUT, COPY, POST, LIST $0.005; GET, HEAD $0.0004; DELETE
free; storage $0.023 per GB-month) and $0.05 per core-hour of compute — illustrative, not a quote.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from bench.report.costmodel import Profile
from bench.report.html_parts import note, table
from bench.report.model import key_numbers
from bench.results.contract import HOTFIX

DEFAULT_PRICES = {"put": 0.005, "post": 0.005, "copy": 0.005, "list": 0.005, "get": 0.0004, "delete": 0.0,
                  "storage_gb_month": 0.023, "core_hour": 0.05}
PER_THOUSAND = ("put", "post", "copy", "list", "get", "delete")


def parse_prices(text: str | None) -> dict[str, float]:
    """``key=value`` pairs over the defaults.

    Raises:
        BadOption: an unknown key or a value that is not a finite number ≥ 0.
    """
    return {**DEFAULT_PRICES, **key_numbers("--prices", text or "", text or "", list(DEFAULT_PRICES))}


@dataclass(frozen=True)
class Bill:
    requests_usd: float
    compute_usd: float

    @property
    def total(self) -> float:
        return self.requests_usd + self.compute_usd


def _requests_usd(counts: dict[str, float], prices: dict[str, float]) -> float:
    return sum(counts.get(k.upper(), 0) * prices[k] / 1000 for k in PER_THOUSAND)


def _mean_requests(frame: pd.DataFrame) -> dict[str, float]:
    return {k.removeprefix("req_").upper(): float(pd.to_numeric(frame[k], errors="coerce").fillna(0).mean()) for k in frame.columns if k.startswith("req_")}


def section_money(ops: pd.DataFrame, reads: pd.DataFrame, profiles: list[Profile], prices: dict[str, float],
                  cores: int) -> str:
    hot = ops[ops.scenario == HOTFIX] if not ops.empty else ops
    if hot.empty or "req_total" not in hot or hot.req_total.isna().all():
        return ""
    rows, verdicts = [], []
    after = reads[reads.phase == "after"] if "phase" in reads else reads
    for config_id, group in hot.groupby("config_id"):
        upd, comp = group[group.operation == "update"], group[group.operation == "compaction"]
        if upd.empty:
            continue
        read = after[after.config_id == config_id]
        read_requests = float(read.requests_per_read.mean()) if "requests_per_read" in read and read.requests_per_read.notna().any() else 0.0
        read_s = float(read.median_s.mean()) if not read.empty else 0.0
        w_req, c_req = _mean_requests(upd), _mean_requests(comp) if not comp.empty else {}
        per_read_usd = read_requests * prices["get"] / 1000  # reads are GET-bound; LIST priced as GET is a floor
        rows.append({"configuration": config_id, "update: requests": f"{w_req.get('TOTAL', 0):,.0f}",
                     "update: $ requests": f"{_requests_usd(w_req, prices):.6f}",
                     "compaction: requests": f"{c_req.get('TOTAL', 0):,.0f}" if c_req else "–",
                     "read: requests": f"{read_requests:,.1f}",
                     "table stored $ / month": f"{float(upd.table_bytes_on_disk.iloc[0] or 0) / 1e9 * prices['storage_gb_month']:.6f}"})
        for p in profiles:
            seconds = float(upd.median_s.iloc[0]) + p.reads_per_write * read_s + \
                (float(comp.median_s.iloc[0]) if not comp.empty else 0.0) / p.writes_per_compaction
            bill = Bill(_requests_usd(w_req, prices) + p.reads_per_write * per_read_usd
                        + (_requests_usd(c_req, prices) if c_req else 0.0) / p.writes_per_compaction,
                        seconds * cores * prices["core_hour"] / 3600)
            verdicts.append({"workload": p.name, "configuration": config_id, "usd": bill.total,
                             "requests_usd": bill.requests_usd, "compute_usd": bill.compute_usd})
    money = pd.DataFrame(verdicts)
    best = [{"workload": w, "cheapest in money": g.loc[g.usd.idxmin(), "configuration"],
             "$ per write cycle (requests + compute)": ", ".join(
                 f"{r.configuration} {r.usd:.6f} ({r.requests_usd:.6f} + {r.compute_usd:.6f})" for r in g.sort_values("usd").itertuples())}
            for w, g in money.groupby("workload", sort=False)] if not money.empty else []
    sheet = ", ".join(f"{k} {v:g}" for k, v in prices.items())
    return ("<h3>Cost view: requests, storage and compute in money</h3>" + table(pd.DataFrame(rows))
            + table(pd.DataFrame(best)) + note(
                f"Price sheet: {sheet} (per 1,000 requests; storage per GB-month; compute per core-hour for {cores} cores). "
                "Defaults are AWS S3 Standard us-east-1 list prices and an illustrative $0.05 per core-hour — pass "
                "--prices to use yours. A write cycle costs W's requests + r x a read's requests + C's requests / k, "
                "and (W + r·R + C/k) seconds of compute. Requests were counted by the object store itself; the "
                "time-based recommendation is in the break-even section."))
