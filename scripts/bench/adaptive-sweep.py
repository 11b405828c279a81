#!/usr/bin/env python3
"""The adaptive bench over many seeds and small studies: the stop posterior's
calibration where it is weakest (docs/performance.md, session 40).

    cargo bench --features ssr --bench adaptive --no-run   # prints the executable
    python3 scripts/bench/adaptive-sweep.py target/release/deps/adaptive-<hash> [SEEDS]

Runs every crowd (`HARDNEG_ADAPTIVE_HOSTILE=1`) with one place per person
(a link study) for each (items, bundle) setting below and seeds 1..SEEDS
(default 10), and prints per crowd the confident stops (posterior >= 0.95)
and the share of them right, summed over the seeds, the answers spent
against a fixed overlap of 5, and the accuracy of every item's settled value.
"""
import collections
import os
import subprocess
import sys

SETTINGS = [(70, 10), (140, 5), (140, 10), (600, 5), (600, 20)]


def rows(binary, items, bundle, seed):
    """The bench's table rows: name -> (items, confident, right, answers, fixed answers, items right)."""
    env = dict(os.environ, HARDNEG_ADAPTIVE_HOSTILE="1", HARDNEG_ADAPTIVE_PLACES="one",
               HARDNEG_ADAPTIVE_ITEMS=str(items), HARDNEG_ADAPTIVE_BUNDLE=str(bundle),
               HARDNEG_ADAPTIVE_SEED=str(seed))
    out = subprocess.run([binary], env=env, capture_output=True, text=True, check=True).stdout
    table, found = {}, False
    for line in out.splitlines():
        if line.startswith("crowd  "):
            found = True
            continue
        if found and not line.strip():
            break
        if found and not line.startswith("pooled"):
            name, f = line[:26].strip(), line[26:].split()
            n, conf, answers, of5 = int(f[0]), int(f[1]), int(f[4]), float(f[5].rstrip("%"))
            table[name] = (n, conf, round(float(f[2].rstrip("%")) * conf / 100), answers,
                           answers / (of5 / 100), round(float(f[6].rstrip("%")) * n / 100))
    if not table:
        sys.exit(f"no table in the bench's output for items {items}, bundle {bundle}, seed {seed}")
    return table


def show(name, t):
    n, conf, right, answers, fixed, acc = t
    print(f"  {name:<26} confident {conf:>5}  right {100 * right / max(conf, 1):6.2f}%  "
          f"answers {100 * answers / fixed:5.1f}% of 5x  accuracy {100 * acc / n:6.2f}%")


def main():
    binary, seeds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10
    total = collections.defaultdict(lambda: [0] * 6)
    for items, bundle in SETTINGS:
        per = collections.defaultdict(lambda: [0] * 6)
        for seed in range(1, seeds + 1):
            for name, t in rows(binary, items, bundle, seed).items():
                for i, x in enumerate(t):
                    per[name][i] += x
                    total[name][i] += x
        print(f"== {items} items, bundles of {bundle}, one place each, seeds 1-{seeds}")
        for name, t in per.items():
            show(name, t)
    print("== every setting")
    for name, t in total.items():
        show(name, t)


if __name__ == "__main__":
    main()
