#!/usr/bin/env python3
"""Fits the forecast margins (engine/forecast.h, kForecastMargin) and reports them on held-out runs.

Each DIR is a `tiresias sim --forecast-every N --forecast-margin 0,0 --out DIR` run (its
forecasts.csv: start forecasts made at submit, with the real starts). On the training runs,
pooled, each side's margin is the 90% finite-sample conformal quantile of how far real starts
fell before p10 (or after p90) on the scale ln(seconds from the forecast + 60); the held-out
runs are then reported with those margins applied, as serve and sim apply them.

    scripts/fit_forecast_margin.py --train A B C --test D E
"""
import argparse
import csv
import math


def scale(t, at):
    return math.log(max(0.0, t - at) + 60)


def load(run_dir):
    rows = []
    with open(f"{run_dir}/forecasts.csv") as f:
        for r in csv.DictReader(f):
            if r["start_s"]:  # jobs that never started are left out, as AssessForecasts does
                rows.append({k: (float(v) if v else None) for k, v in r.items()})
    return rows


def outside(r):
    """How far before p10 and after p90 the real start fell (negative: not)."""
    a = scale(r["start_s"], r["at_s"])
    below = scale(r["p10_s"], r["at_s"]) - a if r["p10_s"] is not None else 1e9
    above = a - scale(r["p90_s"], r["at_s"]) if r["p90_s"] is not None else -1e9
    return below, above


def conformal(scores, level=0.9):
    s = sorted(scores)
    rank = min(len(s), math.ceil(level * (len(s) + 1)))
    return max(0.0, s[rank - 1])


def coverage(rows, lo, hi):
    early = late = 0
    for r in rows:
        below, above = outside(r)
        # Moved down by lo (never before the forecast itself), up by hi.
        if below > lo and scale(r["start_s"], r["at_s"]) > math.log(60):
            early += 1
        elif above > hi:
            late += 1
    n = len(rows)
    return (n - early - late) / n, early / n, late / n


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--train", nargs="+", required=True)
    p.add_argument("--test", nargs="*", default=[])
    args = p.parse_args()
    train = [(d, load(d)) for d in args.train]
    scores = [outside(r) for _, rows in train for r in rows]
    lo = conformal([b for b, _ in scores])
    hi = conformal([a for _, a in scores])
    print(f"margins {lo:.3f},{hi:.3f} (x{math.exp(lo):.2f} below p10, x{math.exp(hi):.2f} above "
          f"p90) from {len(scores)} forecasts")
    for kind, runs in (("train", train), ("held-out", [(d, load(d)) for d in args.test])):
        for d, rows in runs:
            if not rows:
                continue
            raw = coverage(rows, 0, 0)
            c = coverage(rows, lo, hi)
            print(f"{kind:8} {d}: {len(rows)} forecasts, within p10-p90 {100 * raw[0]:.0f}% raw, "
                  f"{100 * c[0]:.0f}% with the margins (before {100 * c[1]:.0f}%, after "
                  f"{100 * c[2]:.0f}%)")


if __name__ == "__main__":
    main()
