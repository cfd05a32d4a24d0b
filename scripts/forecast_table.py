#!/usr/bin/env python3
"""The README's "When will my job run" table: start forecasts at submit on every Philly week.

For each week of the trace, `tiresias sim --policy fifo --forecast-every 40` (2x16x8, shipped
defaults, durations hidden from the forecast) writes forecasts.csv: a forecast at the submit of
every 40th job that waits, with its real start and the naive estimate. Printed per week, with
the shipped margins (fitted on these same weeks: in-sample): the forecasts, median absolute
error of p50 against naive, and the share of real starts inside p10-p90 (before p10 / after
p90). Then each week held out in turn (scripts/fit_forecast_margin.py: margins and step fitted
on the other weeks): the share inside per week and pooled, with an interval from resampling
whole weeks (a week's forecasts share their errors, so weeks, not forecasts, are the
independent units), and the margins fitted on all weeks (the ones to ship).

usage: scripts/forecast_table.py BUILD/tiresias TRACE [OUT_DIR [--reuse]]
(--reuse: keep a week's forecasts.csv already in OUT_DIR; a week takes 1 s to a minute, days
42-49 (a backlog of ~10,000 jobs for days) about 15 minutes)
"""
import csv
import math
import os
import statistics
import subprocess
import sys

import fit_forecast_margin

WEEKS = list(range(0, 106, 7))
EVERY = 40  # a forecast at the submit of every 40th job that waits


def t(r, col):
    """A time of forecasts.csv; empty: not within the forecast's horizon (later than any)."""
    return float(r[col]) if r[col] else math.inf


def inside(rows):
    return sum(t(r, "p10_s") <= t(r, "start_s") <= t(r, "p90_s") for r in rows)


def err(rows, col):
    return statistics.median(abs(t(r, col) - t(r, "start_s")) / 3600 for r in rows)


def main():
    binary, trace = sys.argv[1], sys.argv[2]
    out = sys.argv[3] if len(sys.argv) > 3 else "/tmp/forecast-table"
    reuse = "--reuse" in sys.argv[4:]
    weeks = {}
    print("| week (days) | forecasts | median error | naive | "
          "within p10-p90 (before / after) |")
    print("|---|---|---|---|---|")
    for day in WEEKS:
        d = f"{out}/d{day}"
        if not (reuse and os.path.exists(f"{d}/forecasts.csv")):
            subprocess.run([binary, "sim", "--trace", trace, "--cluster", "2x16x8", "--policy",
                            "fifo", "--from-day", str(day), "--days", "7", "--forecast-every",
                            str(EVERY), "--out", d], check=True, stdout=subprocess.DEVNULL)
        rows = []
        if os.path.exists(f"{d}/forecasts.csv"):  # not written when no forecast was made
            with open(f"{d}/forecasts.csv") as f:
                rows = list(csv.DictReader(f))
        label = f"{day}-{day + 7}"
        if not rows:
            print(f"| {label} | 0 (no job waited) | | | |")
            continue
        weeks[day] = rows
        n, i = len(rows), inside(rows)
        before = sum(t(r, "start_s") < t(r, "p10_s") for r in rows)
        print(f"| {label} | {n} | {err(rows, 'p50_s'):.1f} h | "
              f"{err(rows, 'naive_s'):.1f} h | {100 * i / n:.0f}% ({100 * before / n:.0f}% / "
              f"{100 * (n - i - before) / n:.0f}%) |")
    rows = [r for d in weeks for r in weeks[d]]
    wins = sum(err(weeks[d], "p50_s") < err(weeks[d], "naive_s") for d in weeks)
    print(f"\nall weeks: {len(rows)} forecasts, {100 * inside(rows) / len(rows):.1f}% within "
          f"p10-p90 (in-sample); median error {err(rows, 'p50_s'):.1f} h, naive "
          f"{err(rows, 'naive_s'):.1f} h (lower on {wins} of {len(weeks)} weeks)\n")
    big = [d for d in weeks if len(weeks[d]) >= 20]
    p = inside(rows) / len(rows)
    var = sum(len(weeks[d]) * (inside(weeks[d]) / len(weeks[d]) - p) ** 2
              for d in big) / (len(big) - 1)
    print(f"design effect {var / (p * (1 - p)):.1f} over the {len(big)} weeks with 20 forecasts "
          f"or more\n")
    sys.argv = [sys.argv[0]] + [f"{out}/d{d}" for d in sorted(weeks)]
    fit_forecast_margin.main()


if __name__ == "__main__":
    main()
