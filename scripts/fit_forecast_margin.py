#!/usr/bin/env python3
"""Fits the forecast margins (engine/forecast.h: kForecastMargin, kMarginStep), each run held out in turn.

Each DIR is a `tiresias sim --forecast-every N --out DIR` run (its forecasts.csv: start
forecasts made at submit, with the real starts and the samples' own range, raw_p10_s and
raw_p90_s; a run with `--forecast-margin 0,0 --forecast-step 0` has only p10_s and p90_s, which
are then the raw ones). Each side's fixed margin is the 90% conformal quantile of how far real
starts fell before p10 (or after p90) on the scale ln(seconds from the forecast + 60), over the
runs' forecasts, each weighted by what its run is worth: a run's forecasts share their errors
(the backlog ahead, the week's durations against the history), so a run of n forecasts counts
as n / (1 + (n - 1) RHO) independent ones and a run with many does not outvote the others. The adaptive margins
(MarginTracker) are replayed as the simulator and serve apply them: they start from the fixed
ones and, before each forecast, every side whose outcome is known by then (the job started, or
the clock passed that bound while it waited) moves its margin by step x (miss - 0.1).

The step is the one whose runs, replayed with those margins, come closest to 80% inside
p10-p90 pooled. Every run is held out in turn (margins and step fitted on the others, then
replayed on it); printed are that table, the pooled share held out (with an interval from
resampling whole runs), and the margins and step fitted on all runs, the ones to ship.

    scripts/fit_forecast_margin.py DIR... [--steps 0 0.01 0.03 0.05 0.1]
"""
import argparse
import csv
import math
import random

SIDE_MISS = 0.1
MAX_MARGIN = 6.0
# How alike two forecasts of one run are (their intra-run correlation): a run of n forecasts
# is worth n / (1 + (n - 1) RHO) independent ones, so each of its forecasts weighs
# 1 / (1 + (n - 1) RHO) in the fit. On Philly the weekly share inside p10-p90 varies about 20
# times a binomial's (README) over weeks of 145 forecasts on average: 1 + 144 RHO = 21.
RHO = 0.15


def scale(t, at):
    return math.log(max(0.0, t - at) + 60)


def load(run_dir):
    """All forecasts, in the order made; raw p10/p90 (before any margin) as p10_s, p90_s."""
    rows = []
    with open(f"{run_dir}/forecasts.csv") as f:
        for r in csv.DictReader(f):
            row = {k: (float(v) if v else None) for k, v in r.items()}
            if "raw_p10_s" in r:
                row["p10_s"], row["p90_s"] = row["raw_p10_s"], row["raw_p90_s"]
            rows.append(row)
    return rows


def started(rows):
    # Jobs that never started are left out of the scores, as AssessForecasts does.
    return [r for r in rows if r["start_s"] is not None]


def outside(r):
    """How far before p10 and after p90 the real start fell (negative: not)."""
    a = scale(r["start_s"], r["at_s"])
    below = scale(r["p10_s"], r["at_s"]) - a if r["p10_s"] is not None else 1e9
    above = a - scale(r["p90_s"], r["at_s"]) if r["p90_s"] is not None else -1e9
    return below, above


def conformal(runs, side, level=0.9):
    """The level-quantile of one side's scores over the runs, each run weighing what it is
    worth, with the finite-sample correction of split conformal (a new forecast weighs at most
    1 more), within [0, MAX_MARGIN]."""
    weighted = []
    for rows in runs:
        scores = [outside(r)[side] for r in started(rows)]
        weighted += [(x, 1 / (1 + (len(scores) - 1) * RHO)) for x in scores]
    weighted.sort()
    total, acc = sum(w for _, w in weighted), 0.0
    for x, w in weighted:
        acc += w
        if acc >= level * (total + 1) - 1e-12:
            return min(MAX_MARGIN, max(0.0, x))
    return MAX_MARGIN  # the quantile lies beyond every score seen


def moved(t, now, by):
    """WidenRange's move of a bound t by `by` on the scale, in seconds (ms resolution)."""
    s = math.exp(math.log(max(0.0, t - now) + 60) + by) - 60
    return now + round(max(0.0, s) * 1000) / 1000


def adapt(margin, miss, step):
    return min(MAX_MARGIN, max(0.0, margin + step * ((1.0 if miss else 0.0) - SIDE_MISS)))


def replay(rows, initial, step):
    """Coverage (inside, early, late) of the rows that started under MarginTracker's margins."""
    m = list(initial)
    pending = []  # [p10, p90, start, low open, high open]
    inside = early = late = n = 0
    for r in rows:
        now = r["at_s"]
        still = []
        for p in pending:
            p10, p90, s = p[0], p[1], p[2]
            seen = s is not None and s <= now
            if p[3]:
                miss = None
                if seen:
                    miss = p10 is None or s < p10
                elif p10 is not None and now >= p10:
                    miss = False
                if miss is not None:
                    m[0] = adapt(m[0], miss, step)
                    p[3] = False
            if p[4]:
                miss = None
                if seen:
                    miss = p90 is not None and s > p90
                elif p90 is not None and now > p90:
                    miss = True
                if miss is not None:
                    m[1] = adapt(m[1], miss, step)
                    p[4] = False
            if p[3] or p[4]:
                still.append(p)
        pending = still
        p10, p90 = r["p10_s"], r["p90_s"]
        if p10 is not None and m[0] > 0:
            p10 = min(p10, moved(p10, now, -m[0]))
        if p90 is not None and m[1] > 0:
            p90 = max(p90, moved(p90, now, m[1]))
        s = r["start_s"]
        pending.append([p10, p90, s, True, True])
        if s is None:
            continue
        n += 1
        if p10 is not None and s < p10:
            early += 1
        elif p90 is not None and s > p90:
            late += 1
        else:
            inside += 1
    return inside / n, early / n, late / n, m


def fit(runs, steps):
    """Margins and step on `runs` (lists of rows): the margins as above, the step whose runs,
    replayed with them, come closest to 80% inside p10-p90 pooled."""
    runs = [rows for rows in runs if started(rows)]
    lo, hi = conformal(runs, 0), conformal(runs, 1)
    total = sum(len(started(rows)) for rows in runs)

    def off(step):
        inside = sum(replay(rows, (lo, hi), step)[0] * len(started(rows)) for rows in runs)
        return abs(inside / total - 0.8)

    return lo, hi, min(steps, key=off)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="+")
    p.add_argument("--steps", nargs="*", type=float, default=[0, 0.01, 0.02, 0.03, 0.05, 0.1])
    args = p.parse_args()
    runs = [(d, load(d)) for d in args.runs]
    runs = [(d, rows) for d, rows in runs if started(rows)]
    if len(runs) < 2:
        p.error("give two runs or more with a started forecast (one is held out at a time)")
    print("Each run held out, margins and step fitted on the others:\n")
    print("| held out | forecasts | margins | step | within p10-p90, fixed | adaptive "
          "(before / after) |")
    print("|---|---|---|---|---|---|")
    by_run = {}
    for d, rows in runs:
        lo, hi, step = fit([r for e, r in runs if e != d], args.steps)
        n = len(started(rows))
        fixed = replay(rows, (lo, hi), 0)[0]
        c = replay(rows, (lo, hi), step)
        by_run[d] = (n, c[0] * n)
        print(f"| {d} | {n} | {lo:.2f}, {hi:.2f} | {step:.2f} | {100 * fixed:.0f}% | "
              f"{100 * c[0]:.0f}% ({100 * c[1]:.0f}% / {100 * c[2]:.0f}%) |")
    names = list(by_run)
    rng = random.Random(1)
    shares = []
    for _ in range(4000):
        pick = [rng.choice(names) for _ in names]
        shares.append(sum(by_run[d][1] for d in pick) / sum(by_run[d][0] for d in pick))
    shares.sort()
    n = sum(v[0] for v in by_run.values())
    print(f"\npooled: {len(names)} runs, {n} forecasts, "
          f"{100 * sum(v[1] for v in by_run.values()) / n:.1f}% within p10-p90 held out (runs "
          f"resampled, 90%: {100 * shares[200]:.0f}-{100 * shares[3800]:.0f}%)")
    lo, hi, step = fit([rows for _, rows in runs], args.steps)
    print(f"fitted on all runs: margins {lo:.3f},{hi:.3f} (x{math.exp(lo):.2f} below p10, "
          f"x{math.exp(hi):.2f} above p90), step {step:.3f}")


if __name__ == "__main__":
    main()
