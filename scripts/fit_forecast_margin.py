#!/usr/bin/env python3
"""Fits the forecast margins (engine/forecast.h: kForecastMargin, kMarginStep) and reports them on held-out runs.

Each DIR is a `tiresias sim --forecast-every N --out DIR` run (its forecasts.csv: start
forecasts made at submit, with the real starts and the samples' own range, raw_p10_s and
raw_p90_s; a run with `--forecast-margin 0,0 --forecast-step 0` has only p10_s and p90_s, which
are then the raw ones). On the training runs, pooled, each side's fixed margin is the 90%
finite-sample conformal quantile of how far real starts fell before p10 (or after p90) on the
scale ln(seconds from the forecast + 60). Then the adaptive margins (MarginTracker) are
replayed on every run, as the simulator and serve apply them: they start from the fixed ones
and, before each forecast, every side whose outcome is known by then (the job started, or the
clock passed that bound while it waited) moves its margin by step x (miss - 0.1). The step
whose training runs come closest to 80% inside p10-p90 (summed over runs) is chosen.

    scripts/fit_forecast_margin.py --train A B C --test D E [--steps 0 0.03 0.05 0.1]
"""
import argparse
import csv
import math

SIDE_MISS = 0.1
MAX_MARGIN = 6.0


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


def conformal(scores, level=0.9):
    s = sorted(scores)
    rank = min(len(s), math.ceil(level * (len(s) + 1)))
    return max(0.0, s[rank - 1])


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


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--train", nargs="+", required=True)
    p.add_argument("--test", nargs="*", default=[])
    p.add_argument("--steps", nargs="*", type=float, default=[0, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2])
    args = p.parse_args()
    train = [(d, load(d)) for d in args.train]
    test = [(d, load(d)) for d in args.test]
    scores = [outside(r) for _, rows in train for r in started(rows)]
    lo = conformal([b for b, _ in scores])
    hi = conformal([a for _, a in scores])
    print(f"margins {lo:.3f},{hi:.3f} (x{math.exp(lo):.2f} below p10, x{math.exp(hi):.2f} above "
          f"p90) from {len(scores)} forecasts")
    best = None
    for step in args.steps:
        off = sum(abs(replay(rows, (lo, hi), step)[0] - 0.8) for _, rows in train if started(rows))
        print(f"step {step:.3f}: training runs {100 * off:.0f} points from 80% in all")
        if best is None or off < best[0] - 1e-12:
            best = (off, step)
    step = best[1]
    print(f"step {step:.3f}")
    for kind, runs in (("train", train), ("held-out", test)):
        for d, rows in runs:
            if not started(rows):
                continue
            fixed = replay(rows, (lo, hi), 0)
            c = replay(rows, (lo, hi), step)
            print(f"{kind:8} {d}: {len(started(rows))} forecasts, within p10-p90 "
                  f"{100 * replay(rows, (0, 0), 0)[0]:.0f}% raw, {100 * fixed[0]:.0f}% with the "
                  f"fixed margins (before {100 * fixed[1]:.0f}%, after {100 * fixed[2]:.0f}%), "
                  f"{100 * c[0]:.0f}% adaptive (before {100 * c[1]:.0f}%, after "
                  f"{100 * c[2]:.0f}%; margins end at {c[3][0]:.2f},{c[3][1]:.2f})")


if __name__ == "__main__":
    main()
