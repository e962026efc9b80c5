"""The report's "Several writers" section, and the four concurrency claims it checks."""

from __future__ import annotations

import pandas as pd

from bench.core import failures, uncertainty
from bench.core.failures import BLIND
from bench.report import charts
from bench.report.html_parts import img, note, table
from bench.results import load
from bench.results.contract import BASELINE_ROUTE, REFERENCE_ENGINE, SEVERAL_WRITERS, Record
from bench.results.schema import ONCE, READS, BatchCommit, Uncertainty, WritersBatch, WritersRace, WritersSetup, parse

HUDI_CLEAN_AUTOMATIC = "hoodie.clean.automatic"  # whether each writer cleans after its commits (Hudi's default: yes)

ONEHOUSE = "cowmor seeds: the Onehouse deep dive on merge-on-read and concurrency control"


def races(run: load.Run) -> pd.DataFrame:
    """One row per race: configuration, control, kind, writers, overlap and what happened."""
    rows = []
    for r, x in race_views(run):
        engines = x.invariants.engines
        spark = engines.get(REFERENCE_ENGINE)
        once = spark.checks.get(ONCE) if spark and spark.read == READS else None
        rows.append({
            "configuration": r.config_id, "control": x.control, "set-up": setup(x), "writers as": x.kind,
            "writers": x.writers, "overlap": x.overlap, "batches": x.batches_attempted, "committed": x.batches_committed,
            "failed": x.batches_failed, "conflicts": x.conflicts, "retries": x.retries,
            "commit attempts": x.commit_attempts,
            "conflict rate": round(x.conflict_rate, 2), "rows/s committed": round(x.committed_rows_per_s, 2),
            "races": x.races or 1, "rows/s per race, median (interval)": interval(rates(x)),
            "services ok / lost": f"{x.services_committed} / {x.services_failed}",
            "services ok": x.services_committed, "services lost": x.services_failed,
            "conflict classes": ", ".join(f"{k.rsplit('.', 1)[-1]} x{v}" for k, v in x.conflict_classes.items()) or "–",
            "why attempts failed": causes(x),
            "failed attempts by kind": by_kind(x),
            "lock wait per commit, median / max (s)": lock_wait(x),
            # the claims' evidence: failures another writer's commit caused, and the table service's (an older run
            # without kinds counts every failure as a write conflict, and says so)
            "write conflicts": _kind(x, failures.WRITE_CONFLICT), "service failures": _kind(x, failures.TABLE_SERVICE),
            "writer or service": _kind(x, failures.WRITER_OR_SERVICE), "kinds recorded": x.failure_kinds is not None,
            "writers clean": writers_clean(x), "acknowledged, changed no row": empty_commits(x),
            AT_ONCE: overlapping_file_groups(x), CONTROL: is_control(x),
            "invariants": "hold" if not x.violations else f"{len(x.violations)} violated",
            "engines checked": ", ".join(e for e, v in engines.items() if v.read == READS) or "–",
            # an engine that could not read the table checked nothing: named, never counted as holding
            "engines that could not read": "; ".join(f"{e} ({v.read})" for e, v in engines.items() if v.read != READS) or "–",
            "increments lost to merging": (once.increments_lost_to_the_merge_rule or 0) if once else 0,
        })
    return pd.DataFrame(rows)


def unrecorded(run: load.Run) -> pd.DataFrame:
    """The grid points a run set out to race that recorded no race: their test failed before its record was written
    (a harness error, a server that did not start). Listed with the reason, never dropped from the grid in silence."""
    recorded = {r.name for r in run.records(SEVERAL_WRITERS)}
    outcomes = load.outcomes(run)
    if outcomes.empty or "nodeid" not in outcomes:
        return pd.DataFrame()
    failed = outcomes[(outcomes.test == "test_several_writers") & (outcomes.outcome == "failed")]
    rows = []
    for nodeid, params, reason in zip(failed.nodeid, failed.params, failed.reason):
        if str(nodeid).rsplit("::", 1)[-1] in recorded or not isinstance(params, dict):
            continue
        rows.append({"configuration": params.get("config_id"), "control": params.get("control"),
                     "writers as": params.get("kind"), "writers": int(params.get("writers", 0)),
                     "overlap": params.get("overlap"), "races": 0,
                     "invariants": f"not measured: {str(reason).splitlines()[0][:240]}"})
    return pd.DataFrame(rows)


def race_views(run: load.Run) -> list[tuple[Record, WritersRace]]:
    """Each race's record with its typed view."""
    return [(r, r.view(WritersRace)) for r in run.records(SEVERAL_WRITERS)]


AT_ONCE = "file groups written at once by two writers"  # overlapping_file_groups; None where not recorded
CONTROL = "a control"  # is_control: the claims are decided without these races
OVERLAP_ORDER = ("disjoint_files", "shared_files", "same_keys")  # the least contention first (workload.contention)


def overlap_rank(overlap: str) -> int:
    """Where an overlap sorts in tables and charts: the least contention first, an unknown one last."""
    return OVERLAP_ORDER.index(overlap) if overlap in OVERLAP_ORDER else len(OVERLAP_ORDER)


def violations(run: load.Run) -> pd.DataFrame:
    """Every broken invariant with its evidence, one row per line (a table of counts alone would hide which key)."""
    rows = [{"configuration": r.config_id, "control": x.control, "set-up": setup(x), "writers as": x.kind, "writers": x.writers,
             "overlap": x.overlap, "evidence": line[:EVIDENCE_CHARS] + ("…" if len(line) > EVIDENCE_CHARS else "")}
            for r, x in race_views(run) for line in x.violations]
    return pd.DataFrame(rows)


EVIDENCE_CHARS = 600


def setup(x: WritersRace) -> str:
    """Realistic (a team's cadence, heartbeat and retention) or the stress variant; a race recorded before set-ups
    were named ran what is now the stress variant's service, heartbeat and expiry."""
    named = x.coordination.setup
    if named is None:
        return "stress (recorded before set-ups were named)"
    every = named.service_every_commits
    service = "no service" if not named.service else \
        ("service back to back" if not every else f"service every {every} commits")
    return f"{named.name} ({', '.join([service, *changed_factors(named)])})"


def changed_factors(named: WritersSetup) -> list[str]:
    """The factors a set-up changes from its variant's defaults, as the set-up's label names them (the table service
    is named in every label, whether a team's cadence or none; who cleans has a column of its own)."""
    factors = []
    if named.route == BASELINE_ROUTE:  # the join
        factors.append("rows found by a MERGE from a keys view")
    if named.names_partition:
        factors.append("the statement names its days")
    if named.retry == BLIND:
        factors.append("blind retry")
    if named.name == "stress" and not named.heartbeat_ms:
        factors.append("Hudi's own heartbeat")
    return factors


def is_control(x: WritersRace) -> bool:
    """A race whose set-up changes one factor of its variant's defaults (``changed_factors``, no table service, or
    only the service cleaning): it isolates a factor, and the claims are decided without it (the controls table sets
    it beside the point it controls)."""
    named = x.coordination.setup
    if named is None:
        return False
    return bool(changed_factors(named)) or not named.service or named.writers_clean is False


def _acknowledged_commits(x: WritersRace) -> list[tuple[WritersBatch, BatchCommit]]:
    """Each acknowledged batch with the last of its labelled commits (``invariants.attach_commits``), over every race."""
    return [(b, b.commits[-1]) for b in x.batches if b.committed and b.commits]


def empty_commits(x: WritersRace) -> str:
    """Acknowledged batches whose commit reports it changed no row (the format's own count: Hudi's ``numUpdateWrites``,
    Delta's ``numUpdatedRows``), over every race of the point; "–" where the format reports no count (Iceberg)."""
    counted = [c for _, c in _acknowledged_commits(x) if c.rows_changed is not None]
    return str(sum(c.rows_changed == 0 for c in counted)) if counted else "–"


def overlapping_file_groups(x: WritersRace) -> int | None:
    """File groups that commits of two writers both wrote while both were running (their requested..completed times
    overlap), over every race of the point: the evidence that writers really shared a file group at once (claim 4).
    None where no commit recorded its file groups (Iceberg, Delta; a Hudi run recorded before they were read)."""
    spans: dict[tuple[int | None, str], list[tuple[int | None, float, float]]] = {}
    recorded = False
    for b, commit in _acknowledged_commits(x):
        if commit.file_groups is None:
            continue
        recorded = True
        if commit.began_at is None or commit.completed_at is None:
            continue
        for group in commit.file_groups:
            spans.setdefault((b.race, group), []).append((b.writer, commit.began_at, commit.completed_at))
    if not recorded:
        return None
    return sum(any(w1 != w2 and s1 < e2 and s2 < e1 for i, (w1, s1, e1) in enumerate(commits) for w2, s2, e2 in commits[i + 1:])
               for commits in spans.values())


def writers_clean(x: WritersRace) -> str:
    """Whether each writer also cleans after its commits (Hudi's default) or leaves it to the table service
    (``--param writer_inline_clean=0``): the setting Hudi's after-commit failures depend on; "–" where the format has
    no such setting."""
    for s in x.coordination.settings:
        if s.key == HUDI_CLEAN_AUTOMATIC:
            return "yes" if str(s.value).lower() == "true" else "no (the table service only)"
    return "–"


def causes(x: WritersRace) -> str:
    """Failed attempts by cause, most first (another writer's commit, the table service, a clean or rollback racing
    the same instant), as the format words it; a run recorded before causes were kept says so."""
    if not x.conflicts:
        return "–"
    if x.failure_causes is None:
        return "not recorded (an older run)"
    return _listed(x.failure_causes)


def lock_wait(x: WritersRace) -> str:
    """The committed batches' waits for the format's lock; "–" where none was measured (no lock, or writer threads)."""
    wait = x.lock_wait_per_commit_s
    return "–" if not wait else f"{wait.median:.2f} / {wait.max:.2f}"


def _waiting(run: load.Run, wanted) -> str:
    """Claim 2's "without waiting": the NBCC commits' lock waits, or that none were measured."""
    waits = [x.lock_wait_per_commit_s for r, x in race_views(run)
             if wanted(r, x) and x.lock_wait_per_commit_s and not is_control(x)]
    if not waits:
        return "waiting: not measured"
    points = f"{len(waits)} grid point" + ("s" if len(waits) > 1 else "")
    return (f"waiting: the commits' median wait for the lock, per grid point, up to {max(w.median for w in waits):.2f} s "
            f"(the longest {max(w.max for w in waits):.2f} s; {sum(w.commits for w in waits)} commits in {points})")


def by_kind(x: WritersRace) -> str:
    """Failed attempts by kind (``bench.core.failures``: who caused them), most first."""
    if not x.conflicts:
        return "–"
    return _listed(x.failure_kinds) if x.failure_kinds is not None else "not recorded (an older run)"


def _kind(x: WritersRace, kind: str) -> int:
    """Failed attempts of one kind; an older run without kinds: every failure is a write conflict (the old reading)."""
    if x.failure_kinds is None:
        return x.conflicts if kind == failures.WRITE_CONFLICT else 0
    return x.failure_kinds.get(kind, 0)


HIDDEN = ["increments lost to merging", "write conflicts", "service failures", "writer or service", "kinds recorded",
          "services ok", "services lost", CONTROL]


def _unkinded(frame: pd.DataFrame) -> str:
    """The caveats a claim's evidence carries: races recorded before failures had kinds, and races an engine could not
    read (their invariants were checked on the other engines only)."""
    caveat = "" if frame["kinds recorded"].all() else " (older races without kinds: every failure counted as a write conflict)"
    unread = sorted({e.split(" (")[0] for cell in frame["engines that could not read"] if cell != "–" for e in cell.split("; ")})
    if unread:
        caveat += f" ({', '.join(unread)} could not read {int((frame['engines that could not read'] != '–').sum())} of these races: " \
                  "their invariants were checked on the other engines only)"
    return caveat


def _listed(counts: dict[str, int]) -> str:
    """``cause xN`` for each cause, most first."""
    return "; ".join(f"{cause} x{n}" for cause, n in sorted(counts.items(), key=lambda kv: -kv[1]))


def interval(summary: Uncertainty) -> str:
    """The median over the races with what they support (``uncertainty.median_text``; one race has no spread)."""
    return uncertainty.median_text(summary.median or 0.0, summary.ci95, summary.n, of="race")


def rates(x: WritersRace) -> Uncertainty:
    """The median with its interval over the races (a run recorded before repeated races: its one race's figure)."""
    return x.committed_rows_per_s_uncertainty or parse(Uncertainty, uncertainty.describe([x.committed_rows_per_s]))


def per_race(run: load.Run) -> pd.DataFrame:
    """Committed rows per second of every race, for the curve (seaborn draws each point's 95% band over the races)."""
    rows = [{"config_id": f"{r.config_id} {x.control} ({x.kind}, {x.overlap})", "writers": x.writers, "rows_per_s": rate}
            for r, x in race_views(run) for rate in x.committed_rows_per_s_by_race or [x.committed_rows_per_s]]
    return pd.DataFrame(rows)


def _scaling_claim(frame: pd.DataFrame) -> dict:
    """Claim 1 at the writer counts measured: 50 writers are beyond a laptop, but its mechanism (copy-on-write writers
    failing each other's rewrites of the same files) shows as the share of commit attempts lost to other writers'
    commits (write conflicts, not the table service's) per writer count."""
    most = int(frame.writers.max())
    curves = []
    for (config, control, overlap), g in frame.groupby(["configuration", "control", "overlap"]):
        by_n = g.groupby("writers")[["commit attempts", "write conflicts"]].sum()
        curves.append(f"{config} ({control}, {overlap}): write conflicts / commit attempts " + ", ".join(
            f"{int(r['write conflicts'])}/{int(r['commit attempts'])} at {n}" for n, r in by_n.iterrows()))
    at_most = frame[frame.writers == most]
    cow = at_most[at_most.configuration == "iceberg-cow"]
    hudi = at_most[at_most.configuration.str.startswith("hudi")]
    verdict = "not measurable at this scale" if most < 50 else "see measured"
    if most < 50 and not cow.empty and not hudi.empty:
        def share(g: pd.DataFrame) -> float:
            return float(g["write conflicts"].sum() / max(g["commit attempts"].sum(), 1))
        # each pair on the overlaps both raced: disjoint files lose few attempts, the same keys many, so shares over
        # different mixes of overlaps would compare the mixes, not the formats
        # each Hudi configuration under each concurrency control apart: copy-on-write and merge-on-read under OCC
        # rewrite different files, so pooling them as "OCC" would compare a mix of table types
        pairs = {}
        for (config, control), g in hudi.groupby(["configuration", "control"]):
            both = sorted(set(g.overlap) & set(cow.overlap))
            if both:
                pairs[f"{config} ({control})"] = (share(cow[cow.overlap.isin(both)]), share(g[g.overlap.isin(both)]), both)
        if pairs:
            best = min(pairs, key=lambda c: pairs[c][1])  # the claim is about Hudi at its best for many writers
            fights = pairs[best][0] > pairs[best][1]
            verdict += (f" (50+ writers); at {most} writers, on the overlaps both raced, " + "; ".join(
                f"iceberg-cow lost {cow_share:.0%} of its commit attempts to other writers' commits against "
                f"{name} {hudi_share:.0%} ({', '.join(both)})"
                for name, (cow_share, hudi_share, both) in sorted(pairs.items()))
                + f": the mechanism {'shows' if fights else 'does not show'} here (against {best})")
        else:
            verdict += (f" (50+ writers); at {most} writers iceberg-cow ({', '.join(sorted(set(cow.overlap)))}) and "
                        f"Hudi ({', '.join(sorted(set(hudi.overlap)))}) raced no overlap in common: no comparison")
    return {"claim": CLAIMS[0], "source": ONEHOUSE, "measured": f"up to {most} writers; " + "; ".join(curves) + _unkinded(frame),
            "verdict": verdict}


def _causes(run: load.Run, wanted) -> str:
    """The failed attempts of the races ``wanted`` (a test on a record) summed by cause, most first: the evidence a claim
    about who fails whom needs (another writer, the table service, a clean racing a clean)."""
    total: dict[str, int] = {}
    older = 0
    for r, x in race_views(run):
        if not wanted(r, x) or not x.conflicts or is_control(x):
            continue
        if x.failure_causes is None:
            older += x.conflicts
        for cause, n in (x.failure_causes or {}).items():
            total[cause] = total.get(cause, 0) + n
    text = _listed(total)
    if older:
        text += ("; " if text else "") + f"{older} without a recorded cause (older runs)"
    return f"failed attempts by cause: {text}" if text else "no failed attempt"


def claims(run: load.Run) -> list[dict]:
    """The four concurrency claims, each with what the races measured (or why they cannot say), decided on the races
    of a set-up variant (realistic, stress), not on the controls (``is_control``), which would mix a changed factor
    into the totals; claim 4's file groups written at once count every set-up (a fact of the writers, not a total)."""
    every = races(run)
    frame = every[~every[CONTROL]] if not every.empty else every
    if frame.empty:
        return [{"claim": c, "source": ONEHOUSE, "measured": "the several-writers scenario is not in these runs",
                 "verdict": "not measurable at this scale"} for c in CLAIMS]
    nbcc = frame[(frame.control == "nbcc") & (frame.overlap == "same_keys")]
    hudi = frame[frame.configuration == "hudi-mor"]
    ice = frame[frame.configuration.isin(["iceberg-mor", "iceberg-dv"])]
    shared = frame[(frame.configuration == "hudi-mor") & (frame.overlap == "shared_files")]
    return [_scaling_claim(frame),
            _unmeasurable(1, "no NBCC race on the same keys in these runs") if nbcc.empty else _nbcc_claim(run, nbcc),
            _unmeasurable(2, "needs hudi-mor and iceberg-mor/dv races") if hudi.empty or ice.empty
            else _service_claim(run, frame, hudi, ice),
            _unmeasurable(3, "no hudi-mor race on shared files") if shared.empty else _shared_files_claim(every, shared)]


def _unmeasurable(claim: int, why: str) -> dict:
    return {"claim": CLAIMS[claim], "source": ONEHOUSE, "measured": why, "verdict": "not measurable at this scale"}


def _service_claim(run: load.Run, frame: pd.DataFrame, hudi: pd.DataFrame, ice: pd.DataFrame) -> dict:
    """Claim 3, about the table service and the writers: a writer's attempt the service failed, or a service run lost."""
    def lost(g: pd.DataFrame) -> str:
        return f"{int(g.failed.sum())} batches failed, {int(g['service failures'].sum())} attempts failed by the " \
               f"table service, service runs ok / lost {int(g['services ok'].sum())} / {int(g['services lost'].sum())}"
    hudi_free = bool((hudi["service failures"] == 0).all())
    ice_fight = bool((ice["service failures"] > 0).any() or (ice["services lost"] > 0).any())
    verdict = "holds" if hudi_free and ice_fight else "does not hold"
    hudi_lost = int(hudi["services lost"].sum())
    if verdict == "holds" and hudi_lost:  # no writer failed by the service, but the writers failed the service
        verdict += (f" for Hudi's writers (none failed by its service); but {hudi_lost} of "
                    f"{hudi_lost + int(hudi['services ok'].sum())} of Hudi's own service runs failed beside them")
    return {"claim": CLAIMS[2], "source": ONEHOUSE, "verdict": verdict,
            "measured": f"hudi-mor: {lost(hudi)}, {_causes(run, lambda r, x: r.config_id == 'hudi-mor')}; "
                        f"iceberg: {lost(ice)}, "
                        f"{_causes(run, lambda r, x: r.config_id in ('iceberg-mor', 'iceberg-dv'))}" + _unkinded(frame)}


def _shared_files_claim(every: pd.DataFrame, shared: pd.DataFrame) -> dict:
    """Claim 4, Hudi's writers on shared file groups: committed and conflicts per control, and whether NBCC writers
    really wrote one file group at once (from the commits' write stats, over every set-up)."""
    parts = "; ".join(f"{ctl}: {int(g.committed.sum())}/{int(g.batches.sum())} committed, {int(g.conflicts.sum())} "
                      f"conflicts, invariants broken in {int((g.invariants != 'hold').sum())} of {len(g)} grid points ({int(g.races.sum())} races)"
                      for ctl, g in shared.groupby("control"))
    occ, nbcc_shared = shared[shared.control == "default"], shared[shared.control == "nbcc"]
    every_nbcc = every[(every.configuration == "hudi-mor") & (every.overlap == "shared_files") & (every.control == "nbcc")]
    at_once = every_nbcc[AT_ONCE].dropna()
    if not at_once.empty:
        parts += (f"; NBCC: {int(at_once.sum())} file groups written by two writers' commits that overlapped in "
                  f"time (from the commits' write stats, in the {len(at_once)} of {len(every_nbcc)} grid points "
                  f"of any set-up that recorded them)")
    if not occ.empty and (occ["write conflicts"] > 0).any():
        verdict = "not reproduced here under OCC" + (
            "; under NBCC both commit" if not nbcc_shared.empty and (nbcc_shared["write conflicts"] == 0).all() else "")
    elif not at_once.empty and at_once.sum() == 0:
        verdict = "not shown: no two writers' commits overlapped on one file group"
    else:
        verdict = "holds"
    if (shared.invariants != "hold").any():
        verdict += " (but acknowledged updates were lost: see the invariants)"
    return {"claim": CLAIMS[3], "source": ONEHOUSE, "measured": parts + _unkinded(shared), "verdict": verdict}


def _nbcc_claim(run: load.Run, nbcc: pd.DataFrame) -> dict:
    """Claim 2 on NBCC's races on the same keys: "without failing" is decided on the failures other writers caused
    (write conflicts, and those either a writer or the service may have caused); failures of other kinds are named
    beside it; "without waiting" is the commits' lock waits where the writers' logs gave them (Hudi's applications)."""
    by_writers = (nbcc["write conflicts"] + nbcc["writer or service"]) == 0
    broken = int((nbcc.invariants != "hold").sum())
    if by_writers.all():
        verdict = "holds between writers: no attempt failed on another writer's commit" + (
            "; but commits succeeded with invariants broken" if broken else "")
    else:
        by_n = nbcc.assign(ok=by_writers).groupby("writers").ok.all()
        held = [int(n) for n, ok in by_n.items() if ok]
        verdict = "does not hold" + (f" at {max(int(n) for n, ok in by_n.items() if not ok)} writers; without a failure "
                                     f"another writer may have caused at {', '.join(map(str, held))} writers" if held else "")
    other = int(nbcc.conflicts.sum() - nbcc["write conflicts"].sum() - nbcc["writer or service"].sum())
    waiting = _waiting(run, lambda r, x: x.control == "nbcc" and x.overlap == "same_keys")
    return {"claim": CLAIMS[1], "source": ONEHOUSE, "verdict": verdict + "; " + waiting,
            "measured": f"{int(nbcc.committed.sum())} of {int(nbcc.batches.sum())} batches committed; "
                        f"{int(nbcc['write conflicts'].sum())} write conflicts, {int(nbcc['writer or service'].sum())} "
                        f"by another writer or the service, {other} of other kinds; "
                        f"{int(nbcc['increments lost to merging'].sum())} increments lost to event-time merging (concurrent "
                        "read-modify-writes keep one); "
                        + _causes(run, lambda r, x: x.control == "nbcc" and x.overlap == "same_keys")
                        + "; writers clean: " + ", ".join(sorted(set(nbcc["writers clean"]))) + _unkinded(nbcc)}


CLAIMS = (
    "Hudi sustains 50+ concurrent writers per table where Iceberg copy-on-write tops out at 5-10",
    "Hudi's non-blocking concurrency control lets several writers update the same record at once without waiting or failing",
    "Hudi's compaction runs beside writers without blocking them; in Iceberg a writer and a maintenance job on the same "
    "files keep failing each other",
    "With merge-on-read, two writers updating the same file group both succeed, each with its own log file",
)


def section(run: load.Run, out) -> str:
    frame = races(run)
    if frame.empty:
        return ""
    shown = frame.drop(columns=HIDDEN)
    shown[AT_ONCE] = shown[AT_ONCE].map(lambda n: "–" if n is None or pd.isna(n) else int(n))  # not recorded: –
    parts = ["", table(shown)]
    broken = violations(run)
    if not broken.empty:
        parts.append(note("What the invariants found, race by race (a lost update names its commits' timing where the "
                          "format labels each writer's commit in its own metadata: Hudi, Delta):"))
        parts.append(table(broken))
        kept = [path for _, x in race_views(run) for path in x.evidence or []]
        if kept:
            parts.append(note(f"The tables those races left are kept for a post-mortem (history, commit metadata, "
                              f"data and log files): {', '.join(kept)}. Each Hudi writer application's writer.log, in "
                              f"the run's writers/ folder, has Hudi's conflict decisions for its commits."))
    curve = per_race(run)
    if curve.writers.nunique() > 1:
        parts.append(img(charts.series(curve, "writers", "rows_per_s", "Committed rows per second against writers "
                                       "(median of the races, 95% band)", "writers", "rows/s committed", median_band=True),
                         "throughput against writers", out, "writers_throughput"))
    parts.append(note("Each writer runs batches of updates (amount + 1 and a batch tag on a few keys found by literal "
                      "keys) while the run's own application runs the table service on the set-up's cadence (a team's: "
                      "every few writer commits; the stress variant: back to back). Writers 'as processes' "
                      "are separate Spark applications on Iceberg's JDBC catalog (PostgreSQL) or Hudi's ZooKeeper lock, "
                      "both started by the run; Delta's writers are threads of one application (no multi-driver setup "
                      "works for Delta 3.3.2 here). A batch that fails is retried twice. 'Invariants' are checked on "
                      "every engine: each acknowledged batch applied once, the last committed tag on each row, no "
                      "deleted key back, no duplicate key, the row count, the history gap-free with one writer commit "
                      "per acknowledged batch, the answer unchanged by a last table service."))
    return "".join(parts)
