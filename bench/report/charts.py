"""Seaborn charts, returned as PNG bytes so the page can embed them (no server, no network)."""

from __future__ import annotations

import io
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

sns.set_theme(style="whitegrid", context="notebook")
# the seven configurations keep their colours from run to run; any other (a new format) gets one of its own
PALETTE = {"iceberg-cow": "#1f4e79", "iceberg-mor": "#4f8fd6", "iceberg-dv": "#9cc3ee",
           "hudi-cow": "#7a3b00", "hudi-mor": "#e08a2c", "delta-cow": "#1b5e20", "delta-dv": "#66bb6a"}


def palette(config_ids) -> dict[str, str]:
    """A colour per configuration present: the fixed ones, then distinct colours for configurations not listed."""
    present = list(dict.fromkeys(config_ids))
    others = sorted(c for c in present if c not in PALETTE)
    extra = sns.color_palette("husl", n_colors=max(len(others), 1)).as_hex()
    return {**{c: PALETTE[c] for c in PALETTE if c in present}, **dict(zip(others, extra))}


def _png(fig, layout: bool = True) -> bytes:
    """The figure as PNG bytes; ``layout=False`` keeps a layout the chart made itself (room left for a legend)."""
    buf = io.BytesIO()
    if layout:
        fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def latency_by_config(samples: pd.DataFrame, title: str) -> bytes:
    """Every round as a dot, the median as a bar: spread is visible, not hidden in an error bar."""
    colours = palette(samples.config_id)
    order = list(colours)
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    sns.barplot(samples, x="config_id", y="seconds", hue="config_id", order=order, palette=colours,
                estimator="median", errorbar=None, ax=ax, legend=False)
    sns.stripplot(samples, x="config_id", y="seconds", order=order, color="black", size=4, ax=ax)
    ax.set(xlabel="", ylabel="seconds (bar = median, dots = rounds)", title=title)
    return _png(fig)


def stacked_bytes(frame: pd.DataFrame, title: str) -> bytes:
    """Bytes written per configuration, stacked by part (every column but ``config_id``; empty parts dropped)."""
    plot = frame.set_index("config_id") / 1024
    plot = plot.loc[:, plot.sum() > 0]
    fig, ax = plt.subplots(figsize=(9, 3.8))
    palette = sns.color_palette("tab10", n_colors=max(len(plot.columns), 1))
    plot.plot(kind="bar", stacked=True, ax=ax, color=palette, rot=20)
    ax.set(xlabel="", ylabel="KiB written (filesystem)", title=title)
    ax.legend(fontsize=7, title=None)
    return _png(fig)


def grouped_bars(frame: pd.DataFrame, x: str, y: str, hue: str, title: str, ylabel: str, log: bool = False) -> bytes:
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    sns.barplot(frame, x=x, y=y, hue=hue, ax=ax, errorbar=None)
    if log:
        ax.set_yscale("log")
    ax.set(xlabel="", ylabel=ylabel, title=title)
    ax.legend(fontsize=8, title=None)
    return _png(fig)


def by_storage(samples: pd.DataFrame, title: str) -> bytes:
    """Each configuration's round timings per storage: the median, and the rounds' range as the bar (a storage's few
    rounds make a range, not a 95% interval)."""
    fig, ax = plt.subplots(figsize=(8.5, 3.6))
    sns.barplot(samples, x="config_id", y="seconds", hue="storage", estimator="median", errorbar=("pi", 100), ax=ax)
    ax.set(xlabel="", ylabel="seconds (median; bar: min–max of rounds)", title=title)
    ax.tick_params(axis="x", labelrotation=20)
    ax.legend(fontsize=8, title=None)
    return _png(fig)


def series(frame: pd.DataFrame, x: str, y: str, title: str, xlabel: str, ylabel: str, logx: bool = False,
           median_band: bool = False) -> bytes:
    """One line per configuration; ``median_band``: several rows per point are drawn as their median with the
    median's 95% bootstrap band (else seaborn's default, the mean)."""
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    spread = {"estimator": "median", "errorbar": ("ci", 95)} if median_band else {}
    sns.lineplot(frame, x=x, y=y, hue="config_id", marker="o", palette=palette(frame.config_id), ax=ax, **spread)
    if logx:
        ax.set_xscale("log")
    else:
        ax.xaxis.get_major_locator().set_params(integer=True)  # type: ignore[call-arg]  # MaxNLocator takes it
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    return _png(fig)


def break_even_lines(curves: pd.DataFrame, crossings: list[tuple[float, float, str]], profiles: list[tuple[str, float]],
                     bands: pd.DataFrame | None = None) -> bytes:
    """Total cost per write cycle against reads per write (log-log), each configuration's 95% band (``bands``:
    config_id, reads_per_write, low, high) shaded, crossovers and profiles marked."""
    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    colours = palette(curves.config_id)
    sns.lineplot(curves, x="reads_per_write", y="seconds", hue="config_id", palette=colours, ax=ax)
    for config_id, band in (bands.groupby("config_id") if bands is not None else ()):
        ax.fill_between(band.reads_per_write, band.low, band.high, color=colours.get(config_id, "grey"), alpha=0.18,
                        linewidth=0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    for x, y, label in crossings:
        ax.plot([x], [y], marker="X", color="crimson", markersize=9)
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(5, 6), fontsize=7, color="crimson")
    for name, ratio in profiles:
        ax.axvline(ratio, color="grey", linestyle=":", linewidth=1)
        ax.text(ratio, ax.get_ylim()[0] * 1.3, name, rotation=90, fontsize=7, color="dimgrey", va="bottom")
    ax.set(xlabel="reads per write (dashboard queries per update)", ylabel="seconds per write cycle",
           title="Total cost vs read:write ratio")
    return _png(fig)


def trend(frame: pd.DataFrame, changes: list[tuple[int, str]]) -> bytes:
    """Median seconds per benchmark over runs; dotted lines where versions changed."""
    fig, ax = plt.subplots(figsize=(8.5, 3.6))
    sns.lineplot(frame, x="run", y="value", hue="series", marker="o", ax=ax)
    for i, label in changes:
        ax.axvline(i - 0.5, color="crimson", linestyle=":")
        ax.text(i - 0.45, ax.get_ylim()[1] * 0.95, label[:60], fontsize=7, color="crimson", va="top")
    ax.set(xlabel="run (in the order given)", ylabel="median seconds", title="Trend over runs")
    ax.xaxis.get_major_locator().set_params(integer=True)  # type: ignore[call-arg]  # MaxNLocator takes it
    ax.legend(fontsize=7, title=None)
    return _png(fig)


def ratio_bars(frame: pd.DataFrame, title: str, hue: str = "route") -> bytes:
    """Copy-on-write ÷ merge-on-read per pair (``pair``) and ``hue`` (the route, or the storage): ``ratio`` with its
    95% interval (``low``, ``high``) as the error bar, and the tie (1x) marked."""
    pairs, routes = list(dict.fromkeys(frame.pair)), list(dict.fromkeys(frame[hue]))
    # the legend sits under the plot, never over a bar: one row of short labels, a row each for long ones (storage)
    one_row = sum(len(str(r)) for r in routes) <= 60
    columns, rows = (max(len(routes), 1), 1) if one_row else (1, len(routes))
    fig, ax = plt.subplots(figsize=(8.5, 3.4 + 0.22 * rows))
    width = min(0.8 / max(len(routes), 1), 0.3)  # a lone pair's bar stays a bar, not the whole plot
    colours = sns.color_palette("deep", n_colors=len(routes))
    for i, route in enumerate(routes):
        part = frame[frame[hue] == route].set_index("pair").reindex(pairs)
        xs = [p + (i - (len(routes) - 1) / 2) * width for p in range(len(pairs))]
        low = (part.ratio - part.low).clip(lower=0).fillna(0)
        high = (part.high - part.ratio).clip(lower=0).fillna(0)
        ax.bar(xs, part.ratio.to_numpy(dtype=float), width=width, color=colours[i], label=route,
               yerr=[low.to_numpy(dtype=float), high.to_numpy(dtype=float)], capsize=3)
    ax.axhline(1.0, color="#444", linewidth=1, linestyle="--")
    ax.set_xlim(-0.6, len(pairs) - 0.4)
    top = pd.concat([frame.ratio, frame.high]).astype(float).max()
    ax.set_ylim(0, max(1.0, top if pd.notna(top) else 1.0) * 1.1)
    ax.set_xticks(range(len(pairs)), pairs, fontsize=8)
    ax.set(ylabel="update time ratio (×)", title=title)
    ax.legend(fontsize=8, title=hue, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=columns, frameon=False)
    return _png(fig)


def against_claims(frame: pd.DataFrame, title: str) -> bytes:
    """Measured seconds per ``label`` (``median`` with ``low``/``high`` as the error bar, coloured by ``merges``) and
    the claimed seconds (``claimed``) as a black tick over each bar; log scale, the two claims being 40x apart."""
    fig, ax = plt.subplots(figsize=(8.5, 3.6))
    xs = range(len(frame))
    colours = [sns.color_palette("deep")[1 if m else 0] for m in frame.merges]
    low = (frame["median"] - frame.low).clip(lower=0).fillna(0)
    high = (frame.high - frame["median"]).clip(lower=0).fillna(0)
    ax.bar(xs, frame["median"].to_numpy(dtype=float), width=0.5, color=colours,
           yerr=[low.to_numpy(dtype=float), high.to_numpy(dtype=float)], capsize=3)
    ax.scatter(xs, frame.claimed.to_numpy(dtype=float), marker="_", s=900, linewidths=2.5, color="black",
               label="the seeds' claim", zorder=3)
    ax.set_yscale("log")
    ax.set_xlim(-0.6, len(frame) - 0.4)
    ax.set_xticks(list(xs), frame.label, fontsize=8)
    ax.set(ylabel="update seconds (log)", title=title)
    ax.legend(fontsize=8)
    return _png(fig)


def attempts_against_writers(frame: pd.DataFrame, title: str, setup_order: list[str] | None = None) -> bytes:
    """Against the writers (``writers``): the share of the batches that committed (``committed`` of ``batches``) and
    the failed attempts per batch (``failed``), summed over the races; a column per overlap (``overlap``), a colour per
    configuration and control (``setting``), a line style per set-up (``set-up``) where there is more than one, a
    black ring on a point whose invariants broke (``broken`` above 0, where the frame has it); the overlaps' columns in
    the frame's order."""
    overlaps = list(dict.fromkeys(frame.overlap))
    settings = sorted(frame.setting.unique())
    frame = frame.assign(share=frame.committed / frame.batches, per_batch=frame.failed / frame.batches)
    style = "set-up" if frame["set-up"].nunique() > 1 else None
    # every panel the same styles, the legend all of them; the first (a solid line) the set-up the others control
    drawn = set(frame["set-up"])
    setups = [u for u in (setup_order or sorted(drawn)) if u in drawn] if style else None
    fig, axes = plt.subplots(2, len(overlaps), figsize=(3.4 * len(overlaps) + 3.2, 5.8), sharex=True, sharey="row",
                             squeeze=False)
    counts = sorted(frame.writers.unique())
    palette = dict(zip(settings, sns.color_palette("deep", len(settings))))
    for col, overlap in enumerate(overlaps):
        part = frame[frame.overlap == overlap]
        for row, (column, name) in enumerate((("share", "batches committed (share)"), ("per_batch", "failed attempts per batch"))):
            ax = axes[row][col]
            sns.lineplot(part, x="writers", y=column, hue="setting", hue_order=settings, palette=palette, style=style,
                         style_order=setups, marker="o", ax=ax, legend=row == 0 and col == 0)
            broken = part[part.get("broken", pd.Series(0, index=part.index)) > 0]
            ax.scatter(broken.writers, broken[column], s=140, facecolors="none", edgecolors="black", linewidths=1.4,
                       zorder=5, label="invariants broken" if len(broken) else None)
            ax.set(xscale="log", xlabel="writers (log)" if row else "", ylabel=name if col == 0 else "",
                   title=overlap.replace("_", " ") if row == 0 else "")
            ax.minorticks_off()
            ax.set_xticks(counts, [str(n) for n in counts])
    axes[0][0].set_ylim(0, 1.05)
    axes[1][0].set_ylim(0, max(float(frame.per_batch.max()), 0.1) * 1.08)  # rows share a scale: set it once all are drawn
    handles, labels = axes[0][0].get_legend_handles_labels()
    axes[0][0].get_legend().remove()
    ring = next((h for ax in axes[0] for h, label in zip(*ax.get_legend_handles_labels()) if label == "invariants broken"),
                None)
    if ring is not None and "invariants broken" not in labels:
        handles, labels = [*handles, ring], [*labels, "invariants broken"]
    fig.legend(handles, [textwrap.fill(label, 34) for label in labels], loc="center right", fontsize=8, frameon=False)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 0.82, 1))
    return _png(fig, layout=False)


def ratio_against_size(frame: pd.DataFrame, title: str) -> bytes:
    """Copy-on-write ÷ merge-on-read (``ratio``, 95% interval ``low``/``high``) against the file size (``file_mb``),
    one panel per locate route (``route``), one line per pair (``pair``); the tie (1x) dashed."""
    routes = list(dict.fromkeys(frame.route))
    fig, axes = plt.subplots(1, len(routes), figsize=(4.2 * len(routes) + 1, 3.6), sharey=True, squeeze=False)
    colours = dict(zip(dict.fromkeys(frame.pair), sns.color_palette("deep")))
    for ax, route in zip(axes[0], routes):
        for pair, part in frame[frame.route == route].sort_values("file_mb").groupby("pair", sort=False):
            low = (part.ratio - part.low).clip(lower=0).fillna(0)
            high = (part.high - part.ratio).clip(lower=0).fillna(0)
            ax.errorbar(part.file_mb, part.ratio, yerr=[low, high], marker="o", capsize=3, color=colours[pair], label=pair)
        ax.axhline(1.0, color="#444", linewidth=1, linestyle="--")
        ax.set(xscale="log", xlabel="MB per file (log)", title=f"route: {route}")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    axes[0][0].set(ylabel="update time ratio (×)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), fontsize=8, frameon=False)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return _png(fig, layout=False)


def decision_map(frame: pd.DataFrame, seeds: dict[str, float], title: str,
                 marks: list[tuple[str, float, str]] | None = None) -> bytes:
    """The cheapest configuration along reads per write (log x), a strip per workload and route; *too close to call*
    and *too few steps* in greys; the measured cycle's own reads per write as a black tick, the seeds' workloads as
    dashed lines, ``marks`` (a strip's workload, reads per write, a name: a user's table) as named stars."""
    from matplotlib.patches import Patch

    from bench.report.workloads import TOO_CLOSE, TOO_FEW

    undecided = {TOO_CLOSE: "#bdbdbd", TOO_FEW: "#e6e6e6"}
    order = ["order", "workload", "route"] if "order" in frame else ["workload", "route"]
    strips = [((w, r), part) for (w, r), part in frame.sort_values(order).groupby(["workload", "route"], sort=False)]
    colours = {**palette(c for c in frame.cheapest if c not in undecided), **undecided}
    fig, ax = plt.subplots(figsize=(10, 0.55 * len(strips) + 1.9))
    ratios = sorted(frame.reads_per_write.unique())
    step = ratios[1] / ratios[0] if len(ratios) > 1 else 10.0  # each cell spans half a step either side, on the log
    edges = [ratios[0] / step ** 0.5] + [(a * b) ** 0.5 for a, b in zip(ratios, ratios[1:])] + \
        [ratios[-1] * (ratios[-1] / ratios[-2] if len(ratios) > 1 else step) ** 0.5]
    for y, ((workload, route), part) in enumerate(strips):
        part = part.set_index("reads_per_write")
        for i, ratio in enumerate(ratios):
            if ratio in part.index:
                ax.barh(y, edges[i + 1] - edges[i], left=edges[i], height=0.8, color=colours[part.loc[ratio, "cheapest"]],
                        edgecolor="white", linewidth=0.3)
        measured = float(part.measured_reads_per_write.iloc[0])
        if measured == measured:  # a cycle's own reads per write (a sweep point has none)
            ax.plot([measured, measured], [y - 0.4, y + 0.4], color="black", linewidth=2)
        for strip, x, name in marks or []:
            if strip == workload:
                ax.plot([x], [y], marker="*", markersize=14, color="black", markeredgecolor="white")
                ax.annotate(name, (x, y), xytext=(8, -2), textcoords="offset points", fontsize=8, va="center")
    for label, ratio in seeds.items():
        ax.axvline(ratio, color="#333333", linestyle="--", linewidth=1)
        ax.annotate(label, (ratio, len(strips) - 0.5), rotation=0, fontsize=8, ha="center", va="top")  # below the strips
    ax.set_xscale("log")
    ax.set_xlim(edges[0], edges[-1])
    ax.set_ylim(-0.6, len(strips) + (0.2 if seeds else -0.4))
    ax.set_yticks(range(len(strips)), [f"{w} · {r}" for (w, r), _ in strips])
    ax.invert_yaxis()
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("reads per write (black tick: the cycle as measured)")
    ax.set_title(title)
    ax.grid(False)
    handles = [Patch(color=c, label=name) for name, c in colours.items()]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.16 - 0.6 / (len(strips) + 2)), ncol=5, fontsize=8,
              frameon=False)
    return _png(fig)
