#!/usr/bin/env python3
"""Reference fixtures for hardneg's crowd aggregation and agreement intervals.

Dev-time only (never run by the tests). Makes a seeded answer matrix, runs
crowd-kit 1.4.2's DawidSkene and MACE(method="em") on it, and computes the
agreement coefficients on explicit bootstrap resamples with scikit-learn
(Cohen), statsmodels (Fleiss) and the `krippendorff` package (alpha). The
Rust tests (src/domain/aggregate/reference_tests.rs,
src/domain/agreement/bootstrap_tests.rs) read the JSON it writes.

    python3 -m venv /tmp/ck
    /tmp/ck/bin/pip install crowd-kit==1.4.2 statsmodels==0.15.0 krippendorff==0.9.0
    /tmp/ck/bin/python scripts/reference/aggregation_fixture.py
"""
import json
import pathlib

import krippendorff
import numpy as np
import pandas as pd
from crowdkit.aggregation import MACE, DawidSkene
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "aggregation"


def simulate(rng, items, k, accuracies, per_item, shifted):
    """Uniform truths; each item answered by `per_item` distinct workers. A
    worker errs uniformly, except `shifted` ones, who err to (truth + 1) % k."""
    rows, truth = [], []
    for task in range(items):
        t = int(rng.integers(k))
        truth.append(t)
        for w in rng.choice(len(accuracies), size=per_item, replace=False):
            w = int(w)
            if rng.random() < accuracies[w]:
                label = t
            elif w in shifted:
                label = (t + 1) % k
            else:
                label = int(rng.choice([c for c in range(k) if c != t]))
            rows.append((task, w, label))
    return pd.DataFrame(rows, columns=["task", "worker", "label"]), truth


def accuracy(data, probas):
    """Mean posterior probability of the label each worker gave (hardneg's definition)."""
    p = np.array([probas.loc[r.task, r.label] for r in data.itertuples()])
    return data.assign(p=p).groupby("worker")["p"].mean()


def aggregation_fixture():
    rng = np.random.default_rng(2013)
    k = 4
    data, truth = simulate(rng, 150, k, [0.9, 0.8, 0.7, 0.6, 0.35, 0.3], 3, shifted={4})

    ds = DawidSkene(n_iter=100, tol=1e-5)
    ds_probas = ds.fit_predict_proba(data)
    ds_labels = ds_probas.idxmax(axis=1)
    errors = ds.errors_  # (worker, answer) x truth
    confusion = {}
    for w in sorted(data.worker.unique()):
        m = np.zeros((k, k))
        sub = errors.loc[w]
        for answer in sub.index:
            for t in sub.columns:
                m[t][answer] = sub.loc[answer, t]
        confusion[str(w)] = m.round(6).tolist()

    # crowd-kit 1.4.2's MACE indexes its strategy matrix (built by a sorted
    # groupby) with pd.factorize codes (order of first appearance): the two
    # agree only when workers and labels first appear in sorted order. Sorting
    # by (worker, label) gives that, since worker 0 uses every label.
    mace_data = data.sort_values(["worker", "label"], kind="stable").reset_index(drop=True)
    for column in ("worker", "label"):
        uniques = list(pd.factorize(mace_data[column])[1])
        assert uniques == sorted(uniques), column
    mace = MACE(method="em", n_iter=50, n_restarts=10, random_state=0)
    mace_probas = mace.fit_predict_proba(mace_data)
    mace_labels = mace_probas.idxmax(axis=1)
    workers = pd.factorize(mace_data["worker"])[1]
    competence = {str(int(w)): round(float(mace.spamming_[i, 1]), 6) for i, w in enumerate(workers)}

    def per_task(series):
        return [[int(t), round(float(v), 6)] for t, v in series.sort_index().items()]

    fixture = {
        "generator": "scripts/reference/aggregation_fixture.py (crowd-kit 1.4.2)",
        "k": k,
        "truth": truth,
        "answers": data.values.tolist(),
        "dawid_skene": {
            "n_iter": 100,
            "tol": 1e-5,
            "iterations": len(ds.loss_history_),
            "labels": [[int(t), int(l)] for t, l in ds_labels.sort_index().items()],
            "posteriors": per_task(ds_probas.max(axis=1)),
            "accuracy": {str(w): round(float(a), 6) for w, a in accuracy(data, ds_probas).items()},
            "confusion": confusion,
        },
        "mace_em": {
            "n_iter": 50,
            "n_restarts": 10,
            "labels": [[int(t), int(l)] for t, l in mace_labels.sort_index().items()],
            "posteriors": per_task(mace_probas.max(axis=1)),
            "accuracy": {str(w): round(float(a), 6) for w, a in accuracy(data, mace_probas).items()},
            "competence": competence,
        },
    }
    (OUT / "crowd.json").write_text(json.dumps(fixture, separators=(",", ":")) + "\n")


def bootstrap_fixture():
    """4 annotators (5 pairs share items) on 40 items, 3 categories; each
    item rated by 2 or 3 of them. 60 explicit resamples of item positions."""
    rng = np.random.default_rng(12)
    k, items = 3, 40
    ratings = []
    for item in range(items):
        truth = int(rng.integers(k))
        m = 3 if item % 4 == 0 else 2
        # Annotators 0-1-2 and 1-2-3 overlap; 0 and 3 never meet: 5 pairs.
        pool = [0, 1, 2] if item % 2 == 0 else [1, 2, 3]
        for a in rng.choice(pool, size=m, replace=False):
            label = truth if rng.random() < 0.75 else int(rng.integers(k))
            ratings.append((item, int(a), label))
    by_item = {}
    for item, a, c in ratings:
        by_item.setdefault(item, {})[a] = c
    counts = pd.Series([len(v) for v in by_item.values()]).value_counts()
    modal_m = max(counts.index, key=lambda m: (counts[m], m))
    annotators = sorted({a for _, a, _ in ratings})
    pairs = sorted({(a, b) for v in by_item.values() for a in v for b in v if a < b})

    def coefficients(indices):
        drawn = [by_item[i] for i in indices]
        kappas = []
        for a, b in pairs:
            shared = [(v[a], v[b]) for v in drawn if a in v and b in v]
            if not shared:
                kappas.append(None)
                continue
            x, y = zip(*shared)
            with np.errstate(all="ignore"):
                kap = cohen_kappa_score(x, y, labels=list(range(k)))
            kappas.append(None if np.isnan(kap) else float(kap))
        defined = [x for x in kappas if x is not None]
        table = [[sum(1 for c in v.values() if c == j) for j in range(k)] for v in drawn if len(v) == modal_m]
        with np.errstate(all="ignore"):
            fl = fleiss_kappa(np.array(table), method="fleiss") if table else float("nan")
        data = np.array([[v.get(a, np.nan) for v in drawn] for a in annotators], dtype=float)
        al = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal", value_domain=list(range(k)))
        return {
            "pairs": kappas,
            "mean": float(np.mean(defined)) if defined else None,
            "fleiss": None if np.isnan(fl) else float(fl),
            "alpha": None if np.isnan(al) else float(al),
        }

    resamples = [rng.integers(items, size=items).tolist() for _ in range(60)]
    coeffs = [coefficients(r) for r in resamples]

    def interval(values):
        v = [x for x in values if x is not None]
        return [float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5)), len(v)] if v else None

    fixture = {
        "generator": "scripts/reference/aggregation_fixture.py (scikit-learn, statsmodels, krippendorff)",
        "k": k,
        "ratings": ratings,
        "pairs": pairs,
        "original": coefficients(list(range(items))),
        "resamples": resamples,
        "coefficients": coeffs,
        "intervals": {
            "pairs": [interval([c["pairs"][p] for c in coeffs]) for p in range(len(pairs))],
            "mean": interval([c["mean"] for c in coeffs]),
            "fleiss": interval([c["fleiss"] for c in coeffs]),
            "alpha": interval([c["alpha"] for c in coeffs]),
        },
    }
    (OUT / "bootstrap.json").write_text(json.dumps(fixture, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    aggregation_fixture()
    bootstrap_fixture()
