#!/usr/bin/env python3
"""One line of issue 27's metrics from three run folders (LongMemEval_S dev, LoCoMo dev,
FriendsQA dev): `dev-metrics.py NAME LME_DIR LOCOMO_DIR FQA_DIR`. Also prints a header
with --header."""
import json
import sys

COLS = ["LME any@1", "any@5", "all@5", "all@10", "NDCG@10", "turn any@10", "dflt ctx",
        "bench tok", "LoCoMo turn all@10", "dflt ctx", "FQA utt@10", "scene@10"]


def row(path, config):
    s = json.load(open(f"{path}/summary.json"))
    return next(r for r in s["rows"] if r["config"] == config)


def m(r, level, key):
    return r["levels"][level]["overall"]["metrics"][key]


def main():
    if sys.argv[1] == "--header":
        print("| run | " + " | ".join(COLS) + " |")
        print("|---|" + "---:|" * len(COLS))
        return
    name, lme, loc, fqa = sys.argv[1:5]
    lb, ld = row(lme, "bench"), row(lme, "defaults")
    cb, cd = row(loc, "bench"), row(loc, "defaults")
    fb = row(fqa, "bench")
    vals = [
        m(lb, "session_ranking", "recall_any@1"), m(lb, "session_ranking", "recall_any@5"),
        m(lb, "session_ranking", "recall_all@5"), m(lb, "session_ranking", "recall_all@10"),
        m(lb, "session_ranking", "ndcg@10"), m(lb, "turn", "recall_any@10"),
        m(ld, "turn", "evidence_in_context"), None,
        m(cb, "turn", "recall_all@10"), m(cd, "turn", "evidence_in_context"),
        m(fb, "turn", "recall_any@10"), m(fb, "session", "recall_any@10"),
    ]
    cells = [f"{v:.3f}".lstrip("0") if v is not None else "" for v in vals]
    cells[7] = f"{lb['mean_context_tokens']:.0f}"
    print(f"| {name} | " + " | ".join(cells) + " |")


main()
