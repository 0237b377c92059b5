#!/usr/bin/python3
"""The charts of docs/benchmarks/, drawn from the numbers bench/run-all keeps.

usage: /usr/bin/python3 bench/charts.py DATA.json OUTDIR

Needs matplotlib (Debian: python3-matplotlib, which scripts/bootstrap
installs; the `python3` of a pyenv or venv may not see it, hence
/usr/bin/python3). Writes an SVG per chart whose lane has numbers, and
prints one line per chart written: FILE, a tab, its caption. The numbers are
medians of one table each (one invocation, arms interleaved); a chart that
puts two tables side by side says so.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

plt.rcParams.update({
    "svg.fonttype": "none",          # text stays text: smaller files, selectable labels
    "svg.hashsalt": "trawl",         # the same numbers give the same file
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
})

# No date in the file: the same numbers give the same file (a redraw is no diff).
SVG_META = {"Date": None}

# One colour per tool, the same in every chart; trawl stands out.
STYLE = {
    "trawl": ("#d62728", "o", "-", 2.4),
    "trawl -j1": ("#ff9896", "o", "--", 1.6),
    "floor": ("#7f7f7f", "s", ":", 1.6),
    "find": ("#1f77b4", "^", "-", 1.4),
    "fd": ("#2ca02c", "v", "-", 1.4),
    "rg": ("#9467bd", "D", "-", 1.4),
    "git": ("#ff7f0e", "P", "-", 1.4),
}

WALK_ARMS = [  # (label in walk_peers' table, legend, style)
    ("trawl", "trawl (default threads)", "trawl"),
    ("trawl -j1", "trawl -j1", "trawl -j1"),
    ("floor, serial", "floor: openat + getdents64 + close", "floor"),
    ("find", "find -type f", "find"),
    ("fd -u", "fd -u", "fd"),
    ("rg --files -uuu", "rg --files -uuu", "rg"),
    ("git ls-files -o", "git ls-files -o", "git"),
]
RECHECK_ARMS = [
    ("trawl check --cache, unchanged", "trawl check (re-check, nothing changed)", "trawl"),
    ("trawl -j1 --cache, unchanged", "trawl -j1 --cache (answer from the cache)", "trawl -j1"),
    ("trawl -j1, full walk", "trawl -j1, a full walk", "find"),
    ("floor, serial", "floor: one walk at the system-call floor", "floor"),
]


def short(n):
    return "%gM" % (n / 1e6) if n >= 1e6 else "%gk" % (n / 1e3) if n >= 1e3 else "%d" % n


def loglog(ax, series, xlabel, ylabel):
    xs_all = sorted({x for xs, _, _, _ in series for x in xs})
    for xs, ys, legend, style in series:
        colour, marker, line, width = STYLE[style]
        ax.plot(xs, ys, marker=marker, linestyle=line, linewidth=width, color=colour,
                label=legend, markersize=5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    # The trees' sizes on the x axis, milliseconds as plain numbers on the y axis.
    ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(xs_all))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FixedFormatter([short(x) for x in xs_all]))
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: "%g" % v))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.25)


def scale_chart(numbers, out):
    walk = numbers.get("walk", {})
    pts = sorted(walk.values(), key=lambda t: t["files"])
    if len(pts) < 2:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    series = []
    for label, legend, style in WALK_ARMS:
        xy = [(t["files"], t["arms"][label]) for t in pts if t["arms"].get(label)]
        if xy:
            series.append(([x for x, _ in xy], [y for _, y in xy], legend, style))
    loglog(ax, series, "files in the tree (log)", "wall time to list every file, ms (log)")
    ax.set_title("Listing every file: time against tree size", loc="left", fontweight="bold")
    ax.legend(fontsize=8, frameon=False, loc="upper left")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "scale.svg"), metadata=SVG_META)
    plt.close(fig)
    return ("scale.svg", "Time to list every file of trees of %s to %s files (big's generator, "
            "one tree per size), one process per run, medians; each size is one table, its arms "
            "interleaved. Log-log: parallel lines grow alike." % (
                format(pts[0]["files"], ","), format(pts[-1]["files"], ",")))


def recheck_chart(numbers, out):
    pts = sorted(numbers.get("recheck", {}).values(), key=lambda t: t["files"])
    if len(pts) < 2:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    series = []
    for label, legend, style in RECHECK_ARMS:
        xy = [(t["files"], t["arms"][label]) for t in pts if t["arms"].get(label)]
        if xy:
            series.append(([x for x, _ in xy], [y for _, y in xy], legend, style))
    loglog(ax, series, "files in the tree (log)", "wall time, ms (log)")
    ax.set_title("Re-checking an unchanged tree against walking it", loc="left",
                 fontweight="bold")
    ax.legend(fontsize=8, frameon=False, loc="upper left")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "recheck.svg"), metadata=SVG_META)
    plt.close(fig)
    return ("recheck.svg", "The cache's re-check of an unchanged tree (`trawl check`: a stat per "
            "directory recorded, no directory read) against a full walk, by tree size; medians, "
            "one table per size, arms interleaved.")


def bars(ax, labels, values, colours, title, unit="ms"):
    pos = range(len(labels))
    b = ax.bar(pos, values, color=colours, width=0.6)
    ax.set_xticks(list(pos))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_title(title, fontsize=9.5, loc="left")
    ax.set_ylabel("wall, %s" % unit)
    ax.grid(axis="x", visible=False)
    top = max(values) if values else 1
    for rect, v in zip(b, values):
        ax.annotate(("%.0f" % v) if v >= 100 else ("%.1f" % v) if v >= 1 else ("%.2f" % v),
                    (rect.get_x() + rect.get_width() / 2, rect.get_height()),
                    xytext=(0, 2), textcoords="offset points", ha="center", fontsize=8)
    ax.set_ylim(0, top * 1.18)


def noop_chart(data, out):
    panels = []
    cm = data.get("cmake", {}).get("numbers", {}).get("noop", {}).get("ninja 1")
    if cm:
        panels.append(("CMake + Ninja, one GLOB_RECURSE\n(flat20k: 5,000 of 20,000 files)",
                       ["no re-check", "CONFIGURE_\nDEPENDS", "trawl_glob"],
                       [cm["none"], cm["cmake"], cm["trawl"]],
                       [STYLE["floor"][0], STYLE["find"][0], STYLE["trawl"][0]], "ms"))
    me = data.get("meson", {}).get("numbers", {}).get("noop")
    if me and "ninja, hand" in me and "ninja, trawl" in me:
        panels.append(("Meson + Ninja, 20,000 files\n(flat20k)",
                       ["list written\nout by hand", "trawl lists,\nre-checked", "trawl check\nalone"],
                       [me["ninja, hand"], me["ninja, trawl"], me.get("trawl check alone") or 0],
                       [STYLE["floor"][0], STYLE["trawl"][0], STYLE["trawl -j1"][0]], "ms"))
    bz = data.get("bazel", {}).get("numbers", {})
    if "native" in bz and "trawl" in bz:
        panels.append(("Bazel query, **/*.{ts,tsx} on repo\n(warm server; 7,400 paths)",
                       ["native\nglob()", "trawl_glob()"] +
                       (["empty\nBUILD"] if "empty" in bz else []),
                       [bz["native"]["warm"], bz["trawl"]["warm"]] +
                       ([bz["empty"]["warm"]] if "empty" in bz else []),
                       [STYLE["find"][0], STYLE["trawl"][0], STYLE["floor"][0]], "s"))
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(3.4 * len(panels), 4.0))
    if len(panels) == 1:
        axes = [axes]
    for ax, (title, labels, values, colours, unit) in zip(axes, panels):
        bars(ax, labels, values, colours, title, unit)
    fig.suptitle("A build with nothing to do, with and without trawl", x=0.01, ha="left",
                 fontweight="bold")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "noop.svg"), metadata=SVG_META)
    plt.close(fig)
    return ("noop.svg", "No-op builds: what each build system costs when nothing changed, with "
            "its own glob re-check (or none) and with trawl's; medians, each panel one table of "
            "its lane (CMake, Meson, Bazel), arms interleaved. The build compiles nothing: the "
            "re-check is all there is.")


def repo_chart(data, out):
    q = data.get("walker", {}).get("numbers", {}).get("repo", {}).get("gitignore")
    if not q:
        return None
    arms = sorted(((v, k) for k, v in q["arms"].items() if v), reverse=True)
    fig, ax = plt.subplots(figsize=(7.5, 0.32 * len(arms) + 1.2))
    colours = []
    for _, k in arms:
        key = ("trawl" if k.startswith("trawl") else "floor" if k.startswith("floor") else
               "fd" if k.startswith("fd") else "rg" if k.startswith("rg") else
               "git" if k.startswith("git") else "find")
        colours.append(STYLE[key][0])
    ax.barh(range(len(arms)), [v for v, _ in arms], color=colours)
    ax.set_yticks(range(len(arms)))
    ax.set_yticklabels([k for _, k in arms], fontsize=8)
    ax.set_xlabel("wall, ms (median)")
    ax.grid(axis="y", visible=False)
    for i, (v, _) in enumerate(arms):
        ax.annotate("%.1f" % v, (v, i), xytext=(3, -3), textcoords="offset points", fontsize=7.5)
    ax.set_title("repo: **/*.{ts,tsx} honouring .gitignore (2,600 files)", loc="left",
                 fontweight="bold", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "walk-repo.svg"), metadata=SVG_META)
    plt.close(fig)
    return ("walk-repo.svg", "One question, every tool: the files of `repo` (53,601 files, a "
            "gitignored node_modules/) matching `**/*.{ts,tsx}`, honouring .gitignore; medians of "
            "one table, arms interleaved.")


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1]) as f:
        data = json.load(f)
    out = argv[2]
    made = [
        scale_chart(data.get("scale", {}).get("numbers", {}), out),
        noop_chart(data, out),
        recheck_chart(data.get("scale", {}).get("numbers", {}), out),
        repo_chart(data, out),
    ]
    for m in made:
        if m:
            print("%s\t%s" % m)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
