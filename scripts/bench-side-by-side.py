#!/usr/bin/env python3
"""Cairn's HNSW index, ChromaDB and LanceDB side by side on the same vectors and queries.

One run does it all: generates seeded unit vectors (a clustered Gaussian mixture, so the
nearest neighbours are not trivial to find) and queries, computes the exact top-k of each
query by brute force (numpy), then for each size and system: ingest/build time, query
latency one query at a time from one thread (p50/p99), recall@k against the exact top-k,
disk and peak RSS. Each (size, system) runs in a child process of its own, so its peak RSS
is its own. Results: <out>/results.jsonl (one line per size and system) and
<out>/summary.md. Vectors and indexes live under --work (never the repository).

  python3 -m venv /tmp/vbench/venv
  /tmp/vbench/venv/bin/pip install -r benches/side-by-side-requirements.txt
  cargo build --release -p cairn-cli
  /tmp/vbench/venv/bin/python scripts/bench-side-by-side.py --sizes 100000,1000000 \\
      --cairn target/release/cairn --work /tmp/vbench/work --out docs/benchmarks/runs/side-by-side

Systems and their settings (each one's defaults):
  cairn        `cairn bench ann`: cairn-store's AnnVectorIndex, the embedded store's own
               USearch HNSW (M 16, ef_construction 384, ef_search 256, f16, inner product),
               built on every core; queried in Rust (no client library in between).
  chroma       chromadb.PersistentClient, one collection, default HNSW (space l2, M 16,
               ef_construction 100, ef_search 100), added in batches of the client's
               max batch size; queried with collection.query(n_results=k).
  lance-flat   lancedb.connect, one table, no index: LanceDB scans every vector (exact).
  lance-ivfpq  the same table after create_index("vector", IvfPq()), LanceDB's default
               vector index (IVF_PQ, default partitions, sub-vectors, nprobes; no
               refine), queried with the same search call.
"""
import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

DIM = 384


def generate(work: Path, n: int, nq: int, seed: int, clusters: int) -> None:
    """vectors.f32 (n rows) and queries.f32 (nq rows): unit vectors drawn around `clusters`
    random centres, with noise of the same order as the centres' spread, so a query's
    neighbours are in its cluster but not trivially separated from the next ones."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, DIM)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)

    def draw(count: int, rng) -> np.ndarray:
        c = centres[rng.integers(0, clusters, count)]
        v = c + rng.standard_normal((count, DIM)).astype(np.float32) * (1.0 / np.sqrt(DIM)) * 1.2
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        return v.astype(np.float32)

    with open(work / "vectors.f32", "wb") as f:
        for start in range(0, n, 100_000):
            draw(min(100_000, n - start), rng).tofile(f)
    draw(nq, np.random.default_rng(seed + 1)).tofile(work / "queries.f32")


def vectors(work: Path, n: int) -> np.ndarray:
    return np.memmap(work / "vectors.f32", dtype=np.float32, mode="r", shape=(n, DIM))


def queries(work: Path) -> np.ndarray:
    q = np.fromfile(work / "queries.f32", dtype=np.float32)
    return q.reshape(-1, DIM)


def truth(work: Path, n: int, k: int) -> Path:
    """Exact top-k (inner product = cosine for unit vectors) of every query over the first
    n vectors, by brute force in blocks."""
    out = work / f"truth-{n}.i32"
    if out.exists():
        return out
    q = queries(work)
    v = vectors(work, n)
    best_s = np.full((len(q), k), -np.inf, dtype=np.float32)
    best_i = np.zeros((len(q), k), dtype=np.int64)
    for start in range(0, n, 50_000):
        block = np.asarray(v[start : start + 50_000])
        s = q @ block.T
        idx = np.argpartition(-s, k, axis=1)[:, :k]
        cand_s = np.concatenate([best_s, np.take_along_axis(s, idx, 1)], axis=1)
        cand_i = np.concatenate([best_i, idx + start], axis=1)
        keep = np.argsort(-cand_s, axis=1)[:, :k]
        best_s = np.take_along_axis(cand_s, keep, 1)
        best_i = np.take_along_axis(cand_i, keep, 1)
    best_i.astype(np.int32).tofile(out)
    return out


def recall(found: list, want: np.ndarray) -> int:
    return len(set(found) & set(int(x) for x in want))


def timed_queries(q: np.ndarray, want: np.ndarray, search, k: int, limit: int) -> dict:
    lat, hit = [], 0
    for i in range(min(limit, len(q))):
        t = time.perf_counter()
        found = search(q[i])
        lat.append((time.perf_counter() - t) * 1000.0)
        hit += recall(found, want[i])
    lat.sort()
    n = len(lat)

    def pct(p):  # nearest rank, as cairn_load::stats
        return lat[max(0, min(n - 1, int(np.ceil(p / 100.0 * n)) - 1))]

    return {
        "queries": n,
        "latency_ms": {"n": n, "mean": sum(lat) / n, "p50": pct(50), "p95": pct(95), "p99": pct(99), "max": lat[-1]},
        "recall_at_k": hit / (n * k),
    }


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def run_chroma(work: Path, n: int, k: int, limit: int) -> dict:
    import chromadb

    path = work / f"chroma-{n}"
    shutil.rmtree(path, ignore_errors=True)
    client = chromadb.PersistentClient(path=str(path))
    col = client.create_collection("bench")
    batch = client.get_max_batch_size()
    v = vectors(work, n)
    t = time.perf_counter()
    for start in range(0, n, batch):
        block = np.asarray(v[start : start + batch])
        col.add(ids=[str(i) for i in range(start, start + len(block))], embeddings=block)
    build = time.perf_counter() - t
    want = np.fromfile(truth(work, n, k), dtype=np.int32).reshape(-1, k)

    def search(x):
        r = col.query(query_embeddings=[x], n_results=k, include=[])
        return [int(i) for i in r["ids"][0]]

    res = timed_queries(queries(work), want, search, k, limit)
    res.update(
        system="chroma",
        index=f"chromadb {chromadb.__version__} HNSW, defaults (l2, M 16, ef_construction 100, ef_search 100); batches of {batch}",
        build_seconds=build,
        disk_bytes=du(path),
    )
    del col, client
    shutil.rmtree(path, ignore_errors=True)
    return res


def lance_table(work: Path, n: int):
    import lancedb
    import pyarrow as pa

    path = work / f"lance-{n}"
    shutil.rmtree(path, ignore_errors=True)
    db = lancedb.connect(str(path))
    v = vectors(work, n)

    def batches():
        for start in range(0, n, 100_000):
            block = np.ascontiguousarray(v[start : start + 100_000])
            flat = pa.array(block.reshape(-1), type=pa.float32())
            yield pa.RecordBatch.from_arrays(
                [pa.array(np.arange(start, start + len(block), dtype=np.int64)), pa.FixedSizeListArray.from_arrays(flat, DIM)],
                names=["id", "vector"],
            )

    schema = pa.schema([("id", pa.int64()), ("vector", pa.list_(pa.float32(), DIM))])
    t = time.perf_counter()
    table = db.create_table("bench", data=pa.RecordBatchReader.from_batches(schema, batches()))
    return path, table, time.perf_counter() - t


def run_lance(work: Path, n: int, k: int, limit: int, indexed: bool) -> dict:
    import lancedb
    from lancedb.index import IvfPq

    path, table, ingest = lance_table(work, n)
    build = 0.0
    if indexed:
        t = time.perf_counter()
        table.create_index("vector", config=IvfPq())
        build = time.perf_counter() - t
    want = np.fromfile(truth(work, n, k), dtype=np.int32).reshape(-1, k)

    def search(x):
        r = table.search(x).limit(k).select(["id"]).to_arrow()
        return r.column("id").to_pylist()

    res = timed_queries(queries(work), want, search, k, limit)
    details = {}
    if indexed:
        idx = table.list_indices()[0]
        details = {k: v for k, v in (getattr(idx, "index_details", None) or {}).items() if k != "runtime_hints"}
    res.update(
        system="lance-ivfpq" if indexed else "lance-flat",
        index=(
            f"lancedb {lancedb.__version__} IVF_PQ, create_index defaults ({json.dumps(details)}), default search (no refine)"
            if indexed
            else f"lancedb {lancedb.__version__}, no index: exact scan of every vector"
        ),
        ingest_seconds=ingest,
        index_seconds=build,
        build_seconds=ingest + build,
        disk_bytes=du(path),
    )
    shutil.rmtree(path, ignore_errors=True)
    return res


def run_cairn(work: Path, n: int, k: int, cairn: str) -> dict:
    # The cairn bench reads a vectors file of exactly n rows.
    part = work / f"vectors-{n}.f32"
    if not part.exists():
        with open(work / "vectors.f32", "rb") as src, open(part, "wb") as dst:
            dst.write(src.read(n * DIM * 4))
    out = work / f"cairn-{n}.json"
    cmd = [cairn, "bench", "ann", "--vectors", str(part), "--queries", str(work / "queries.f32"),
           "--truth", str(truth(work, n, k)), "--dim", str(DIM), "--k", str(k), "--out", str(out)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    res = json.loads(out.read_text())
    res["command"] = " ".join(cmd)
    if part != work / "vectors.f32":
        part.unlink()
    return res


def child(args) -> None:
    """One (size, system), in its own process: prints its result as JSON."""
    work, n, k = Path(args.work), args.child_size, args.k
    limit = args.queries
    if args.child_system == "lance-flat" and n >= 1_000_000:
        limit = min(limit, args.flat_queries_1m)
    if args.child_system == "chroma":
        res = run_chroma(work, n, k, limit)
    elif args.child_system == "lance-flat":
        res = run_lance(work, n, k, limit, indexed=False)
    elif args.child_system == "lance-ivfpq":
        res = run_lance(work, n, k, limit, indexed=True)
    else:
        raise SystemExit(f"unknown system {args.child_system}")
    res["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps(res))


def git_sha() -> str:
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except Exception:
        return "unknown"


def summary(lines: list, meta: dict) -> str:
    o = [f"# Side by side: Cairn, ChromaDB, LanceDB\n",
         f"- command: `{meta['command']}`", f"- machine: {meta['machine']}", f"- started {meta['started']}, git {meta['git']}",
         f"- data: {meta['data']}", ""]
    o.append("| vectors | system | build s | query p50 ms | p95 | p99 | recall@10 | queries | disk | peak RSS |")
    o.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in lines:
        l = r["latency_ms"]
        rss = r.get("peak_rss_bytes") or r.get("peak_rss_bytes_during_build") or 0
        disk = r.get("disk_bytes")
        o.append(
            f"| {r['vectors']:,} | {r['system']} | {r['build_seconds']:.1f} | {l['p50']:.2f} | {l['p95']:.2f} | {l['p99']:.2f} | "
            f"{r['recall_at_k']:.3f} | {r['queries']} | {'-' if disk is None else f'{disk / 2**20:.0f} MiB'} | {rss / 2**30:.2f} GiB |"
        )
    o.append("\nIndex settings per line:\n")
    for r in lines:
        o.append(f"- {r['vectors']:,} {r['system']}: {r['index']}")
    return "\n".join(o) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="100000,1000000")
    p.add_argument("--systems", default="cairn,chroma,lance-flat,lance-ivfpq")
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--flat-queries-1m", type=int, default=200, help="queries for the flat scan at 1M and above (each scans every vector)")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--seed", type=int, default=22)
    p.add_argument("--clusters", type=int, default=1000)
    p.add_argument("--cairn", default="target/release/cairn")
    p.add_argument("--work", default="/tmp/vbench/work")
    p.add_argument("--out", default="docs/benchmarks/runs/side-by-side")
    p.add_argument("--child-system", help=argparse.SUPPRESS)
    p.add_argument("--child-size", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child_system:
        return child(args)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    work, out = Path(args.work), Path(args.out)
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    meta = {
        "command": " ".join([Path(sys.executable).name] + sys.argv),
        "machine": f"{platform.node()}, {os.cpu_count()} logical CPUs, {platform.processor() or platform.machine()}, "
        f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.1f} GiB",
        "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "git": git_sha(),
        "data": f"{max(sizes):,} unit vectors of {DIM} dimensions (seed {args.seed}, {args.clusters} Gaussian clusters, "
        f"noise 1.2/sqrt(dim) per dimension), {args.queries} queries drawn the same way (seed {args.seed + 1}); "
        f"each size is the first rows of the file; exact top-{args.k} by numpy brute force",
    }
    t = time.perf_counter()
    if not (work / "vectors.f32").exists() or (work / "vectors.f32").stat().st_size != max(sizes) * DIM * 4:
        generate(work, max(sizes), args.queries, args.seed, args.clusters)
    meta["generate_seconds"] = time.perf_counter() - t
    (out / "results.jsonl").write_text("")
    lines = []
    for n in sizes:
        t = time.perf_counter()
        truth(work, n, args.k)
        print(f"truth {n}: {time.perf_counter() - t:.1f} s", file=sys.stderr)
        for system in args.systems.split(","):
            print(f"{n} {system} ...", file=sys.stderr, flush=True)
            if system == "cairn":
                r = run_cairn(work, n, args.k, args.cairn)
            else:
                cmd = [sys.executable, __file__, "--child-system", system, "--child-size", str(n), "--k", str(args.k),
                       "--queries", str(args.queries), "--flat-queries-1m", str(args.flat_queries_1m), "--work", str(work)]
                r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
            r["vectors"] = n
            print(f"  build {r['build_seconds']:.1f} s, p50 {r['latency_ms']['p50']:.2f} ms, p99 {r['latency_ms']['p99']:.2f} ms, "
                  f"recall@{args.k} {r['recall_at_k']:.3f}", file=sys.stderr, flush=True)
            lines.append(r)
            with open(out / "results.jsonl", "a") as f:
                f.write(json.dumps(r) + "\n")
            (out / "summary.md").write_text(summary(lines, meta))
    meta["finished"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    (out / "run.json").write_text(json.dumps(meta, indent=2) + "\n")
    (out / "summary.md").write_text(summary(lines, meta))
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
