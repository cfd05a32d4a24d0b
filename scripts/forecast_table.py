#!/usr/bin/env python3
"""The README's "When will my job run" table: start forecasts at submit on every Philly week.

For each week of the trace, `tiresias sim --policy fifo --forecast-every 40` (2x16x8, shipped
defaults, durations hidden from the forecast) writes forecasts.csv: a forecast at the submit of
every 40th job that waits, with its real start and the naive estimate. Printed per week: the
forecasts, median absolute error of p50 against naive, and the share of real starts inside
p10-p90 (before p10 / after p90). Then, pooled over the held-out weeks (all but those the
margins were fitted on, TRAIN): the share inside with an interval from resampling whole weeks
(a week's forecasts share their errors, so weeks, not forecasts, are the independent units),
the median errors, and the design effect (how much more the weekly share varies than
independent forecasts' would).

usage: scripts/forecast_table.py BUILD/tiresias TRACE [OUT_DIR [--reuse]]
(--reuse: keep a week's forecasts.csv already in OUT_DIR; a week takes 1 s to a few minutes)
"""
import csv
import math
import os
import random
import statistics
import subprocess
import sys

WEEKS = list(range(0, 106, 7))
TRAIN = {35, 56}  # fifo weeks kForecastMargin and kMarginStep were fitted on (with dlas 49, 63)
# Days 42-49 hold a backlog of ~10,000 jobs for days; each forecast simulates it 16 times,
# and the week's forecasts ran for more than 10 minutes (not measured yet).
SKIP = {42}
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
        if day in SKIP:
            print(f"| {day}-{day + 7} | not measured (a backlog of ~10,000 jobs) | | | |")
            continue
        if not (reuse and os.path.exists(f"{d}/forecasts.csv")):
            subprocess.run([binary, "sim", "--trace", trace, "--cluster", "2x16x8", "--policy",
                            "fifo", "--from-day", str(day), "--days", "7", "--forecast-every",
                            str(EVERY), "--out", d], check=True, stdout=subprocess.DEVNULL)
        rows = []
        if os.path.exists(f"{d}/forecasts.csv"):  # not written when no forecast was made
            with open(f"{d}/forecasts.csv") as f:
                rows = list(csv.DictReader(f))
        label = f"{day}-{day + 7}" + (" (training)" if day in TRAIN else "")
        if not rows:
            print(f"| {label} | 0 (no job waited) | | | |")
            continue
        weeks[day] = rows
        n, i = len(rows), inside(rows)
        before = sum(t(r, "start_s") < t(r, "p10_s") for r in rows)
        print(f"| {label} | {n} | {err(rows, 'p50_s'):.1f} h | "
              f"{err(rows, 'naive_s'):.1f} h | {100 * i / n:.0f}% ({100 * before / n:.0f}% / "
              f"{100 * (n - i - before) / n:.0f}%) |")
    held = sorted(d for d in weeks if d not in TRAIN)
    pooled = [r for d in held for r in weeks[d]]
    p = inside(pooled) / len(pooled)
    rng = random.Random(1)
    shares = []
    for _ in range(4000):
        pick = [rng.choice(held) for _ in held]
        shares.append(sum(inside(weeks[d]) for d in pick) / sum(len(weeks[d]) for d in pick))
    shares.sort()
    wins = sum(err(weeks[d], "p50_s") < err(weeks[d], "naive_s") for d in held)
    big = [d for d in held if len(weeks[d]) >= 20]
    var = sum(len(weeks[d]) * (inside(weeks[d]) / len(weeks[d]) - p) ** 2
              for d in big) / (len(big) - 1)
    print(f"\nheld out: {len(held)} weeks, {len(pooled)} forecasts, {100 * p:.1f}% within p10-p90 "
          f"(weeks resampled, 90%: {100 * shares[200]:.0f}-{100 * shares[3800]:.0f}%); median "
          f"error {err(pooled, 'p50_s'):.1f} h, naive {err(pooled, 'naive_s'):.1f} h (lower on "
          f"{wins} of {len(held)} weeks); design effect {var / (p * (1 - p)):.1f} over the "
          f"{len(big)} weeks with 20 forecasts or more")


if __name__ == "__main__":
    main()
