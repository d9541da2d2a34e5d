#!/usr/bin/env python3
"""Fits learned-ranking weights (`[engine.rank.learned]`, crates/cairn-engine/src/learned.rs)
from the features explained recalls report, and checks them leave-one-dataset-out.

    crates/cairn-bench/scripts/ltr-fit.py RUN_DIR [RUN_DIR ...] [--out WEIGHTS.toml] [--l2 X]

Each RUN_DIR is a run of `cairn bench longmemeval|locomo|friendsqa --config bench
--features-top-k 50` (with `[engine.rank] places = false`, so hits are units): its
results.jsonl holds every question's 50 best units with their features and relevance.

The model is linear (score = weights . features), fitted by pairwise logistic loss: for
each question, every pair of hits where one is more relevant than the other (2: holds an
evidence turn, 1: in an evidence session, 0: neither), each question weighing the same,
with an L2 pull towards the hand-set pass (fused 1, fused_asking -0.15, fused_in_time 0.3).
It reranks the 50 units a question already found, so it measures the second pass only.

For each dataset it prints the hand-set order's metrics and the learned order's when the
weights were fitted on the *other* datasets (leave-one-dataset-out), then fits on all and
writes the weights (as a `[engine.rank.learned]` table) to --out.
"""
import argparse
import json
import os
import sys

import numpy as np

PRIOR = {"fused": 1.0, "fused_asking": -0.15, "fused_in_time": 0.3}


def load(run_dir):
    questions = []
    names = None
    with open(os.path.join(run_dir, "results.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if r.get("config") != "bench" or r.get("exclusion") or r.get("error"):
                continue
            hits = [h for h in r["hits"] if h.get("features")]
            if not hits:
                continue
            names = names or sorted(hits[0]["features"])
            x = np.array([[h["features"][n] for n in names] for h in hits], dtype=np.float64)
            grade = np.array([2 if h["turn_relevant"] else 1 if h["session_relevant"] else 0 for h in hits])
            evidence_turns = {tuple(t) for t in r["evidence"]["turns"]}
            evidence_sessions = set(r["evidence"]["sessions"])
            questions.append({
                "x": x,
                "grade": grade,
                "sessions": [h.get("session_id") for h in hits],
                "turns": [{(h.get("session_id"), t) for t in h["turn_ids"]} for h in hits],
                "evidence_turns": evidence_turns,
                "evidence_sessions": evidence_sessions,
            })
    if names is None:
        sys.exit(f"{run_dir}: no hit carries features (run with --features-top-k)")
    return names, questions


def pairs(questions):
    """Every pair (better, worse) of each question: the difference of their features, the
    pair's question and the two hits' places in it."""
    diffs, qid, a, b = [], [], [], []
    for n, q in enumerate(questions):
        g = q["grade"]
        i, j = np.nonzero(g[:, None] > g[None, :])
        diffs.append(q["x"][i] - q["x"][j])
        qid.append(np.full(len(i), n))
        a.append(i)
        b.append(j)
    return np.vstack(diffs), np.concatenate(qid), np.concatenate(a), np.concatenate(b)


def pair_weights(questions, qid, a, b, w, top_heavy):
    """Each question's pairs weigh 1 in all. `top_heavy` (LambdaRank's idea): a pair
    weighs by how much swapping the two would change the DCG of the order `w` gives, so
    the order near the top counts most."""
    pw = np.ones(len(qid))
    if top_heavy:
        disc = np.zeros(len(qid))
        # Pairs come question by question (`pairs`): each question's are one slice.
        bounds = np.searchsorted(qid, np.arange(len(questions) + 1))
        for n, q in enumerate(questions):
            sel = slice(bounds[n], bounds[n + 1])
            if sel.start == sel.stop:
                continue
            rank = np.empty(len(q["grade"]), dtype=int)
            rank[np.argsort(-(q["x"] @ w), kind="stable")] = np.arange(len(q["grade"]))
            d = 1.0 / np.log2(2.0 + rank)
            disc[sel] = np.abs(d[a[sel]] - d[b[sel]])
        pw = disc
    total = np.bincount(qid, weights=pw, minlength=len(questions))
    return pw / np.where(total > 0, total, 1.0)[qid]


def fit(names, questions, l2, top_heavy=False):
    d, qid, a, b = pairs(questions)
    prior = np.array([PRIOR.get(n, 0.0) for n in names])
    w = prior.copy()
    n_q = len(questions)
    for _ in range(60 if top_heavy else 50):
        pw = pair_weights(questions, qid, a, b, w, top_heavy)
        m = d @ w
        p = 1.0 / (1.0 + np.exp(np.clip(m, -50, 50)))  # sigma(-m)
        grad = -(d * (pw * p)[:, None]).sum(0) / n_q + l2 * (w - prior)
        h = (d * (pw * p * (1 - p))[:, None]).T @ d / n_q + l2 * np.eye(len(w))
        # The weights move the pairs' weights too (top_heavy): half steps settle.
        step = np.linalg.solve(h, grad) * (0.5 if top_heavy else 1.0)
        w -= step
        if np.abs(step).max() < 1e-7:
            break
    return w


def metrics(questions, w):
    """Unit-level turn metrics and session-ranking metrics of each question's reranked hits."""
    out = {k: [] for k in ("turn_any@1", "turn_any@10", "turn_all@10", "sess_any@1", "sess_any@5", "sess_all@5", "sess_all@10")}
    for q in questions:
        order = np.argsort(-(q["x"] @ w), kind="stable") if w is not None else np.arange(len(q["grade"]))
        if q["evidence_turns"]:
            covered = [set().union(*[q["turns"][i] for i in order[:k]]) & q["evidence_turns"] for k in (1, 10)]
            out["turn_any@1"].append(bool(covered[0]))
            out["turn_any@10"].append(bool(covered[1]))
            out["turn_all@10"].append(covered[1] == q["evidence_turns"])
        if q["evidence_sessions"]:
            seen = []
            for i in order:
                s = q["sessions"][i]
                if s not in seen:
                    seen.append(s)
            for k in (1, 5, 10):
                top = set(seen[:k]) & q["evidence_sessions"]
                if k != 10:
                    out[f"sess_any@{k}"].append(bool(top))
                if k != 1:
                    out[f"sess_all@{k}"].append(top == q["evidence_sessions"])
    return {k: np.mean(v) for k, v in out.items() if v}


def show(label, m):
    print(f"  {label:<28}" + "  ".join(f"{k} {v:.3f}" for k, v in m.items()))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--out")
    ap.add_argument("--l2", type=float, default=0.01)
    ap.add_argument("--drop", default="", help="features to leave out (weight 0), comma separated")
    ap.add_argument("--no-check", action="store_true", help="only fit on all the runs and write")
    ap.add_argument("--top-heavy", action="store_true", help="weigh pairs by the DCG change of swapping them (LambdaRank)")
    a = ap.parse_args()
    data = {}
    names = None
    for r in a.runs:
        n, qs = load(r)
        if names and n != names:
            sys.exit(f"{r}: features differ from the other runs'")
        names = n
        data[os.path.basename(os.path.normpath(r))] = qs
    drop = {n for n in a.drop.split(",") if n}
    if drop - set(names):
        sys.exit(f"--drop: no feature named {', '.join(sorted(drop - set(names)))}")
    keep = [i for i, n in enumerate(names) if n not in drop]
    for qs in data.values():
        for q in qs:
            q["x"] = q["x"][:, keep]
    names = [names[i] for i in keep]
    prior = np.array([PRIOR.get(n, 0.0) for n in names])
    print(f"features: {', '.join(names)}; l2 {a.l2}")
    for held, qs in ([] if a.no_check else data.items()):
        others = [q for k, v in data.items() if k != held for q in v]
        print(f"{held} ({len(qs)} questions)")
        show("hand-set order", metrics(qs, None))
        show("prior weights", metrics(qs, prior))
        if others:
            show("fitted on the others", metrics(qs, fit(names, others, a.l2, a.top_heavy)))
        show("fitted on itself", metrics(qs, fit(names, qs, a.l2, a.top_heavy)))
    w = fit(names, [q for v in data.values() for q in v], a.l2, a.top_heavy)
    table = "\n".join(f"{n} = {v:.6g}" for n, v in zip(names, w))
    print("fitted on all:\n" + table)
    if a.out:
        with open(a.out, "w") as f:
            f.write("# Fitted by: crates/cairn-bench/scripts/ltr-fit.py " + " ".join(sys.argv[1:])
                    + "\n[engine.rank.learned]\n" + table + "\n")


if __name__ == "__main__":
    main()
