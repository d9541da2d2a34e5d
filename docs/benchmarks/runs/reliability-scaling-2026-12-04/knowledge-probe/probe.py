#!/usr/bin/env python3
"""Issue 38 experiment: where the knowledge routes' growth at 4,000-16,000 speakers goes.

Starts `cairn serve` on a fresh data dir, seeds the scaling tool's speakers dimension
(group messages, each from a new speaker stating a role and skill), and at each N
measures cold requests (a scratch write first, then an idle wait) per route: CPU
(schedstat), user and system ticks, minor page faults. Prints medians per N.

usage: probe.py CAIRN_BINARY N1,N2,... [REPS]; env ONLY=subjects,history limits the
probes, PERF=DIR records `perf` of 10 cold `GET /subjects` at each N."""
import json, math, os, statistics, subprocess, sys, time, urllib.parse, urllib.request

BIN = sys.argv[1]
SIZES = [int(x) for x in sys.argv[2].split(",")]
REPS = int(sys.argv[3]) if len(sys.argv) > 3 else 5
PERF = os.environ.get("PERF")  # a folder: perf record the subjects probe at each N
PORT = 7791
DATA = "/tmp/p38/data"
ROLES = ["database engineer", "QA lead", "product designer", "data analyst",
         "support manager", "security architect"]
SKILLS = ["database migrations", "load testing", "pricing", "onboarding flows",
          "incident response", "tax rules"]
LETTERS = "bcdfghjklmnprstvz"


def name(i):
    s, x = "", i * 7919 + 17
    for _ in range(5):
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        s += LETTERS[x >> 59 & 15] + "aeiou"[x >> 40 & 3]
    return f"{s[0].upper()}{s[1:]}{i}"


def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}", data=data, method=method,
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        r.read()
        return r.status


def proc(pid):
    run = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            run += int(open(f"/proc/{pid}/task/{t}/schedstat").read().split()[0])
        except OSError:
            pass
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    # fields after the name: state(0) ... minflt(7) majflt(9) utime(11) stime(12)
    return run, int(f[7]), int(f[11]), int(f[12])


def settle(pid):
    last = proc(pid)[0]
    end = time.time() + 10
    while True:
        time.sleep(0.01)
        now = proc(pid)[0]
        if now - last < 1_000_000 or time.time() > end:
            return
        last = now


def seed(lo, hi):
    for a in range(lo, hi, 1000):
        msgs = [{"speaker": f"{name(i)} Lee", "group": "team",
                 "time": f"2024-01-{1 + i // 1000 % 28:02} {i // 60 % 17 + 6:02}:{i % 60:02}",
                 "text": f"I'm the {ROLES[i % 6]} here and I specialize in {SKILLS[i % 6]}."}
                for i in range(a, min(hi, a + 1000))]
        call("POST", "/v1/spaces/scale-speakers/group-messages", {"messages": msgs})


def cold(k):
    # Into the measured space and out again: caches are kept per space since 2026-12-04,
    # so a write to another space (what this did before) no longer makes them cold.
    call("POST", "/v1/spaces/scale-speakers/sessions",
         {"id": f"c{k}", "messages": [{"role": "user", "text": "Scratch write."},
                                       {"role": "assistant", "text": "Noted."}]})
    call("DELETE", f"/v1/spaces/scale-speakers/sessions/c{k}")


PROBES = {
    "subjects": ("GET", "/v1/spaces/scale-speakers/subjects", None),
    "history": ("GET", "/v1/spaces/scale-speakers/history?subject=" +
                "budget%20for%20atlas", None),
    "profile": ("GET", "/v1/spaces/scale-speakers/profiles/" + urllib.parse.quote(f"{name(0)} Lee"), None),
    "speakers": ("GET", "/v1/spaces/scale-speakers/speakers", None),
    "entities": ("GET", "/v1/spaces/scale-speakers/entities", None),
    "recall": ("POST", "/v1/spaces/scale-speakers/recall", {"query": "What does the QA lead do?"}),
    "memories": ("GET", "/v1/spaces/scale-speakers/memories?limit=50", None),
    "memories-late": ("GET", "/v1/spaces/scale-speakers/memories?limit=50&offset=1000", None),
}


def main():
    subprocess.run(["rm", "-rf", DATA])
    server = subprocess.Popen([BIN, "--dir", DATA, "serve", "--no-auth", "--bind", f"127.0.0.1:{PORT}",
                               "--max-request-ms", "0", "--max-body-bytes", "268435456"],
                              stdout=open("/tmp/p38/server.log", "w"), stderr=subprocess.STDOUT)
    for _ in range(300):
        try:
            call("GET", "/v1/health")
            break
        except Exception:
            time.sleep(0.2)
    call("POST", "/v1/spaces/scale-speakers/sessions",
         {"id": "baseline", "messages": [{"role": "user", "text": "The budget for Atlas is $100k."},
                                         {"role": "assistant", "text": "Noted."}]})
    have, k, out = 0, 0, {}
    for n in SIZES:
        t = time.time()
        seed(have, n)
        have = n
        print(f"N={n} seeded in {time.time() - t:.0f} s; records "
              f"{sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(DATA) for f in fs) / 1e6:.0f} MB", flush=True)
        only = os.environ.get("ONLY", "").split(",") if os.environ.get("ONLY") else list(PROBES)
        for probe, (m, path, body) in ((p, PROBES[p]) for p in only):
            rows = []
            for _ in range(REPS):
                k += 1
                cold(k)
                call(m, path, body)  # warm nothing: the write above moved the generation
                k += 1
                cold(k)
                settle(server.pid)
                a = proc(server.pid)
                call(m, path, body)
                settle(server.pid)
                b = proc(server.pid)
                rows.append([y - x for x, y in zip(a, b)])
            med = [statistics.median(c) for c in zip(*rows)]
            out.setdefault(probe, []).append((n, med))
            print(f"  {probe:9} cpu {med[0] / 1e6:7.1f} ms  user {med[2] * 10:5.0f} ms  "
                  f"sys {med[3] * 10:4.0f} ms  minflt {med[1]:7.0f}", flush=True)
        if PERF:
            perf = subprocess.Popen(["perf", "record", "-F", "2000", "-g", "-p", str(server.pid),
                                     "-o", f"{PERF}/n{n}.data"], stderr=subprocess.DEVNULL)
            time.sleep(1)
            for _ in range(10):
                k += 1
                cold(k)
                settle(server.pid)
                call(*PROBES["subjects"][:2])
            perf.send_signal(2)
            perf.wait()
    print("growth per doubling (cpu, minflt):")
    for probe, rows in out.items():
        (n0, a), (n1, b) = rows[0], rows[-1]
        d = max(1, round(math.log2(n1 / n0)))
        g = lambda i: (b[i] / a[i]) ** (1 / d) if a[i] else float("nan")
        print(f"  {probe:9} cpu {g(0):.2f}x  user {g(2):.2f}x  sys {g(3):.2f}x  minflt {g(1):.2f}x")
    server.terminate()


if __name__ == "__main__":
    try:
        main()
    finally:
        subprocess.run(["pkill", "-f", "p38/data serve"])
