#!/usr/bin/env python3
"""Compares two folders of benchmark runs (before/after a refactor): every per-question
record of results.jsonl(.gz) and every number of summary.json, with what is expected to
differ between two runs of the same build masked: wall and engine times, throughput,
memory, when/where/how the run was made, and how warm the embedding cache was (vectors
computed and cached are compared by their sum; --ignore-vector-totals drops even that,
for a cold run against a warm one).

usage: bench-compare.py [--ignore-vector-totals] BEFORE_DIR AFTER_DIR
       (each holding <run-label>/ folders)
exit 0 when every run agrees, 1 otherwise.
"""
import gzip
import json
import os
import sys

# Keys whose values are measurements of time, or facts about the invocation.
TIMING = {
    "ms", "ingest_ms", "recall_wall_ms", "wall_ms", "recall_timings", "timings",
    "engine_total_ms", "stage_means_ms", "recall_engine_ms", "insert_ms", "day_ms",
    "flush_ms", "total_seconds", "turns_per_second", "messages_per_second", "load_seconds",
    "per_trajectory_ms", "query_wall_ms", "query_engine_ms", "latency", "reader_ms",
    "judge_ms", "mean_reader_ms", "mean_judge_ms",
    # bench scale: times, throughput and memory of each point
    "first_recall_ms", "open_ms", "ingest_seconds", "ingest_units_per_second", "latency_ms",
    "latency_without_embedding_ms", "ingest_rss_bytes", "ingest_peak_rss_bytes",
    "serving_rss_bytes", "serving_peak_rss_bytes",
    # bench trajectories-scale: whether the run met its time targets
    "insert_target_met", "query_target_met",
}
META = {
    "started_at", "finished_at", "command_line", "previous_command_lines", "git_sha",
    "build_time", "run_dir", "machine", "embedding_cache", "data_path",
}


IGNORE = set()


def norm(v, key=None):
    if isinstance(v, dict):
        out = {}
        if "vectors_computed" in v and "vectors_cached" in v and "vectors_total" not in IGNORE:
            out["vectors_total"] = v["vectors_computed"] + v["vectors_cached"]
        for k, x in v.items():
            if k in ("vectors_computed", "vectors_cached") and "vectors_total" in out:
                continue
            if k in META or k in IGNORE:
                continue
            if k in TIMING:
                # A distribution keeps its count; a time is dropped.
                if isinstance(x, dict) and "n" in x:
                    out[k] = {"n": x["n"]}
                continue
            out[k] = norm(x, k)
        return out
    if isinstance(v, list):
        return [norm(x, key) for x in v]
    return v


def read_jsonl(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def record_key(r, i):
    for k in ("question_id", "query_index"):
        if k in r:
            return (r[k], r.get("config", ""))
    if "store" in r and "size" in r:
        return (r["store"], r["size"])
    return (i, "")


def diff(a, b, path, out, limit=20):
    if len(out) >= limit:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: only in {'after' if k in b else 'before'}")
            else:
                diff(a[k], b[k], f"{path}.{k}", out, limit)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items before, {len(b)} after")
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{path}[{i}]", out, limit)
    elif a != b:
        out.append(f"{path}: {a!r} before, {b!r} after")


def results_file(d):
    for name in ("results.jsonl", "results.jsonl.gz"):
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return None


def compare_run(before, after):
    problems = []
    rb, ra = results_file(before), results_file(after)
    if rb and ra:
        b = {record_key(r, i): norm(r) for i, r in enumerate(read_jsonl(rb))}
        a = {record_key(r, i): norm(r) for i, r in enumerate(read_jsonl(ra))}
        if set(a) != set(b):
            problems.append(f"records: {len(b)} before, {len(a)} after, keys differ")
        for k in sorted(set(a) & set(b), key=str):
            diff(b[k], a[k], f"results{list(k)}", problems)
        n = len(set(a) & set(b))
    else:
        n = 0
        problems.append("results.jsonl missing")
    with open(os.path.join(before, "summary.json")) as f:
        sb = norm(json.load(f))
    with open(os.path.join(after, "summary.json")) as f:
        sa = norm(json.load(f))
    diff(sb, sa, "summary", problems)
    return n, problems


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--ignore-vector-totals" in sys.argv:
        # A cold and a warm ingest count vectors differently (a text repeated within one
        # batch is computed once but found in the cache per unit); compare them only
        # between runs with the same cache state.
        global IGNORE
        IGNORE = {"vectors_total", "vectors_computed", "vectors_cached"}
    before, after = args[0], args[1]
    ok = True
    for run in sorted(os.listdir(before)):
        b, a = os.path.join(before, run), os.path.join(after, run)
        if not os.path.exists(os.path.join(b, "summary.json")):
            continue
        if not os.path.isdir(a):
            print(f"{run}: MISSING after")
            ok = False
            continue
        n, problems = compare_run(b, a)
        if problems:
            ok = False
            print(f"{run}: {n} records compared, DIFFERENT:")
            for p in problems[:20]:
                print(f"  {p}")
        else:
            print(f"{run}: {n} records and every summary number identical")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
