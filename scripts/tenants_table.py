#!/usr/bin/env python3
"""The README's "Many teams" table: Philly weeks replayed with their VCs as tenants.

For each week, `tiresias compare` runs plain Tiresias (dlas, no tenants), tenant-aware
Tiresias (quotas by the week's GPU-time share, unused quota lent), every VC on a partition of
its quota's size (dlas, no borrowing: "a cluster of its own quota's size") and YARN-CS with the
same fixed quotas (fifo+consolidate, no borrowing). Per VC, mean JCT is compared over the jobs
that finished in every run (a gang larger than its VC's quota cannot run on the partition).

usage: scripts/tenants_table.py BUILD/tiresias TRACE [OUT_DIR [COMPARE_FLAGS...]]
(e.g. --quota-lead -1: strict quotas, every in-quota job before any borrower)
"""
import csv
import os
import subprocess
import sys

WEEKS = [21, 28, 35, 42, 49]
RUNS = ["dlas:shared", "dlas:borrow", "dlas:fixed", "fifo+consolidate:fixed"]


def jobs(path):
    with open(path) as f:
        return {r["id"]: r for r in csv.DictReader(f)}


def main():
    binary, trace = sys.argv[1], sys.argv[2]
    out = sys.argv[3] if len(sys.argv) > 3 else "/tmp/tenants-table"
    print("| week (days) | VCs | plain Tiresias mean JCT (s) | tenant-aware | ratio | "
          "VCs within 5% of own quota | worst VC ratio | YARN-CS fixed quotas |")
    print("|---|---|---|---|---|---|---|---|")
    for day in WEEKS:
        d = f"{out}/d{day}"
        subprocess.run([binary, "compare", "--trace", trace, "--cluster", "2x16x8",
                        "--from-day", str(day), "--days", "7", "--tenants", "trace",
                        "--runs", ",".join(RUNS), "--out", d] + sys.argv[4:],
                       check=True, stdout=subprocess.DEVNULL)
        label = {r: r.replace(":", "+tiresias:", 1) if "+" not in r.split(":")[0] else r
                 for r in RUNS}
        runs = {r: jobs(os.path.join(d, label[r], "jobs.csv")) for r in RUNS}
        mean = lambda rows: sum(float(j["jct"]) for j in rows) / max(1, len(rows))
        fin = lambda r: [j for j in runs[r].values() if j["state"] == "finished"]
        plain, borrow = mean(fin("dlas:shared")), mean(fin("dlas:borrow"))
        both = [i for i, j in runs["dlas:fixed"].items()
                if j["state"] == "finished" and runs["dlas:borrow"][i]["state"] == "finished"]
        vcs = sorted({runs["dlas:fixed"][i]["vc"] for i in both})
        ok, worst = 0, 0.0
        for vc in vcs:
            ids = [i for i in both if runs["dlas:fixed"][i]["vc"] == vc]
            b = mean([runs["dlas:borrow"][i] for i in ids])
            f = mean([runs["dlas:fixed"][i] for i in ids])
            ratio = b / f if f > 0 else 1.0
            worst = max(worst, ratio)
            ok += ratio <= 1.05
            print(f"  day {day} VC {vc}: {len(ids)} jobs, tenant-aware {b:.0f} s, own quota "
                  f"{f:.0f} s, ratio {ratio:.3f}", file=sys.stderr)
        yarn = mean(fin("fifo+consolidate:fixed"))
        print(f"| {day}-{day + 7} | {len(vcs)} | {plain:,.0f} | {borrow:,.0f} | "
              f"{borrow / plain:.3f} | {ok} of {len(vcs)} | {worst:.3f} | {yarn:,.0f} |")


if __name__ == "__main__":
    main()
