#!/usr/bin/env python3
"""Helper of scripts/bench.

--criterion HOME   turn criterion's estimates under HOME into figure JSON lines (stdout)
--results FILE     write the markdown table of a run's figure JSON lines (stdout)
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


def table(results, machine, command, label, date):
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
    for g in figs:
        counts[g.get("status")] = counts.get(g.get("status"), 0) + 1
    out.append("- Figures: %s\n" % ", ".join("%d %s" % (n, s) for s, n in sorted(counts.items())))
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
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--criterion")
    p.add_argument("--results")
    p.add_argument("--machine", default="")
    p.add_argument("--command", default="")
    p.add_argument("--label", default="")
    p.add_argument("--date", default="")
    a = p.parse_args()
    if a.criterion:
        criterion_figures(a.criterion)
    elif a.results:
        sys.stdout.write(table(a.results, a.machine, a.command, a.label, a.date))
    else:
        p.error("--criterion or --results")


if __name__ == "__main__":
    main()
