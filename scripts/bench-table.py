#!/usr/bin/env python3
"""Helper of scripts/bench.

--criterion HOME   turn criterion's estimates under HOME into figure JSON lines (stdout)
--results FILE     write the markdown tables of a run's figure JSON lines (stdout): one
                   table of every figure, except the GPU RDMA / verbs ones, which get
                   tables of their own by sample and message size (--plot PATH: the
                   bandwidth plot to reference under them, relative to the markdown file)
--sections FILE    only those GPU RDMA / verbs tables (the verbs target's results file)
"""
import argparse
import glob
import json
import os
import sys


def criterion_figures(home):
    for est in sorted(glob.glob(os.path.join(home, "**", "new", "estimates.json"), recursive=True)):
        d = os.path.dirname(est)
        try:
            with open(est) as f:
                e = json.load(f)
            with open(os.path.join(d, "benchmark.json")) as f:
                b = json.load(f)
        except (OSError, ValueError):
            continue
        mean = e["mean"]["point_estimate"]
        lo = e["mean"]["confidence_interval"]["lower_bound"]
        hi = e["mean"]["confidence_interval"]["upper_bound"]
        elems = ((b.get("throughput") or {}).get("Elements")) or 1
        print(json.dumps({
            "figure": b.get("full_id", d),
            "value": mean / elems,
            "unit": "ns/pkt" if elems > 1 else "ns/iter",
            "baseline": None, "baseline_value": None, "target": None, "ratio": None,
            "status": "info",
            "notes": "criterion mean over bursts of %d; 95%% CI %.1f-%.1f ns per burst" % (elems, lo, hi),
        }))


def fmt(v, digits=4):
    if v is None:
        return ""
    if isinstance(v, float):
        if v == 0:
            return "0"
        if abs(v) >= 100:
            return "%.1f" % v
        return "%.*g" % (digits, v)
    return str(v)


def cell(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def load_figures(results):
    """The figure JSON lines of a results file (other lines ignored)."""
    figs = []
    with open(results) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                figs.append(json.loads(line))
            except ValueError:
                continue
    return figs


# The GPU verbs samples in the order of their issue, and the figure prefixes that get
# tables of their own.
VERBS_ORDER = ["write_bw", "write_lat", "put_bw", "get_bw", "put_signal_bw", "put_signal_lat",
               "put_counter_bw", "put_counter_lat", "twosided_bw"]
RDMA_PREFIXES = ("rdma/", "dma/")
PERFTEST_CUDA = "ucx/perftest-"


def is_sectioned(g):
    name = g.get("figure", "")
    return (name.startswith("verbs/") or name.startswith(RDMA_PREFIXES)
            or (name.startswith(PERFTEST_CUDA) and "-cuda/" in name))


def size_of(g):
    if g.get("size") is not None:
        return int(g["size"])
    try:
        return int(g.get("figure", "").rsplit("/", 1)[1])
    except (IndexError, ValueError):
        return 0


def met(g):
    st = g.get("status", "")
    return {"pass": "yes", "miss": "no", "info": ""}.get(st, st)


def sections(figs, plot=None):
    """Markdown of the GPU verbs table, the GPU RDMA/DMA table, the perftest baselines
    and the plot reference, for the figures that have them (empty when none)."""
    out = []
    verbs = [g for g in figs if g.get("figure", "").startswith("verbs/")]
    rdma = [g for g in figs if g.get("figure", "").startswith(RDMA_PREFIXES)]
    perf = [g for g in figs if g.get("figure", "").startswith(PERFTEST_CUDA)
            and "-cuda/" in g.get("figure", "")]

    def sample(g):
        return g.get("sample") or g["figure"].split("/")[1]

    def order(g):
        s = sample(g)
        return (VERBS_ORDER.index(s) if s in VERBS_ORDER else len(VERBS_ORDER), s, size_of(g))

    if verbs:
        out.append("\n## GPU verbs samples (issue 13)\n")
        out.append("Each sample as a server and a client process on one GPU over `lo` "
                   "(`scripts/bench --only verbs`); bandwidth in MB/s = 2^20 B/s from the "
                   "client's table, latency the client's unidirectional microseconds; the "
                   "baseline is `ucx_perftest -m cuda` of the same size in the same run.\n")
        out.append("| Sample | Size (B) | Value | Unit | ucx_perftest (same run) | Ratio | Target "
                   "| Met? | Notes |")
        out.append("|---|---:|---:|---|---:|---:|---|---|---|")
        for g in sorted(verbs, key=order):
            out.append("| %s |" % " | ".join(cell(x) for x in [
                sample(g), size_of(g), fmt(g.get("value")), g.get("unit", ""),
                fmt(g.get("baseline_value")), fmt(g.get("ratio"), 3), g.get("target") or "",
                met(g), g.get("notes", "")]))
    if rdma:
        out.append("\n## GPU RDMA and DMA (issue 12)\n")
        out.append("| Figure | Size (B) | Value | Unit | Baseline (same run) | Ratio | Target "
                   "| Met? | Notes |")
        out.append("|---|---:|---:|---|---|---:|---|---|---|")
        for g in sorted(rdma, key=lambda g: (g["figure"].rsplit("/", 1)[0], size_of(g))):
            base = ""
            if g.get("baseline"):
                base = "%s = %s" % (g["baseline"].rsplit("/", 1)[0], fmt(g.get("baseline_value")))
            label = " ".join(g["figure"].split("/")[:2])
            out.append("| %s |" % " | ".join(cell(x) for x in [
                label, size_of(g), fmt(g.get("value")), g.get("unit", ""), base,
                fmt(g.get("ratio"), 3), g.get("target") or "", met(g), g.get("notes", "")]))
    if perf:
        out.append("\n### ucx_perftest with CUDA memory (the baselines above)\n")
        out.append("| Figure | Size (B) | Value | Unit | Notes |")
        out.append("|---|---:|---:|---|---|")
        for g in sorted(perf, key=lambda g: (g["figure"].rsplit("/", 1)[0], size_of(g))):
            out.append("| %s |" % " | ".join(cell(x) for x in [
                g["figure"].rsplit("/", 1)[0], size_of(g), fmt(g.get("value")),
                g.get("unit", ""), g.get("notes", "")]))
    if plot and (verbs or rdma):
        out.append("\n![Bandwidth against message size: GPU verbs samples, GPU RDMA writes "
                   "and ucx_perftest -m cuda](%s)\n" % plot)
    return "\n".join(out) + ("\n" if out else "")


def table(results, machine, command, label, date, plot=None):
    everything = load_figures(results)
    figs = [g for g in everything if not is_sectioned(g)]
    out = []
    out.append("# Benchmarks\n")
    out.append("Latest run of `scripts/bench` (see `benches/`; each figure's baseline is measured"
               " in the same run). Figures that were not measured say why in Notes and carry no"
               " value.\n")
    if label:
        out.append("**%s**\n" % label)
    out.append("- Machine: %s" % machine)
    out.append("- Date: %s" % date)
    out.append("- Command: `%s`" % command)
    counts = {}
    for g in everything:
        counts[g.get("status")] = counts.get(g.get("status"), 0) + 1
    out.append("- Figures: %s\n" % ", ".join("%d %s" % (n, s) for s, n in sorted(counts.items())))
    if figs:
        out.append("| Figure | Value | Unit | Baseline (same run) | Ratio | Target | Status | Notes |")
        out.append("|---|---:|---|---|---:|---|---|---|")
    for g in figs:
        base = ""
        if g.get("baseline"):
            base = "%s = %s" % (g["baseline"], fmt(g.get("baseline_value")))
        out.append("| %s |" % " | ".join(cell(x) for x in [
            g.get("figure", ""), fmt(g.get("value")), g.get("unit", ""), base,
            fmt(g.get("ratio"), 3), g.get("target") or "", g.get("status", ""), g.get("notes", ""),
        ]))
    return "\n".join(out) + "\n" + sections(everything, plot)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--criterion")
    p.add_argument("--results")
    p.add_argument("--machine", default="")
    p.add_argument("--command", default="")
    p.add_argument("--label", default="")
    p.add_argument("--date", default="")
    p.add_argument("--plot")
    p.add_argument("--sections")
    a = p.parse_args()
    if a.criterion:
        criterion_figures(a.criterion)
    elif a.results:
        sys.stdout.write(table(a.results, a.machine, a.command, a.label, a.date, a.plot))
    elif a.sections:
        sys.stdout.write(sections(load_figures(a.sections), a.plot))
    else:
        p.error("--criterion, --results or --sections")


if __name__ == "__main__":
    main()
