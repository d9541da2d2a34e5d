#!/usr/bin/env python3
"""Issue 38: does a forget's CPU follow the size of the text-index segment it rewrites?
Copies a seeded data dir, starts `cairn serve`, and 12 times: writes a two-message session,
commits the text index (a recall elsewhere), waits idle, reads the segments (meta.json),
deletes the session's first message, measures the server's CPU on that DELETE, and names
the segments it replaced (their documents)."""
import json, os, shutil, subprocess, sys, time, urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "knowledge-probe"))
_argv, sys.argv = sys.argv, ["probe", "x", "1"]
import probe
sys.argv = _argv
BIN, SRC = sys.argv[1], sys.argv[2]
DATA = "/tmp/p38/fg/data"
shutil.rmtree(DATA, ignore_errors=True)
shutil.copytree(SRC, DATA)
probe.PORT = 7792
srv = subprocess.Popen([BIN, "--dir", DATA, "serve", "--no-auth", "--bind", "127.0.0.1:7792",
                        "--max-request-ms", "0"], stdout=open("/tmp/p38/fg/server.log", "w"), stderr=subprocess.STDOUT)
try:
    for _ in range(300):
        try:
            probe.call("GET", "/v1/health"); break
        except Exception:
            time.sleep(0.2)
    probe.call("POST", "/v1/spaces/scratch/sessions",
               {"id": "s", "messages": [{"role": "user", "text": "Scratch."}, {"role": "assistant", "text": "Ok."}]})
    def segs():
        m = json.load(open(f"{DATA}/text/meta.json"))
        return {s["segment_id"]: s["max_doc"] for s in m["segments"]}
    for k in range(12):
        probe.call("POST", "/v1/spaces/scale-speakers/sessions",
                   {"id": f"f{k}", "messages": [{"role": "user", "text": f"A memory to forget {k}."},
                                                {"role": "assistant", "text": "Noted."}]})
        probe.call("POST", "/v1/spaces/scratch/recall", {"query": "anything"})
        probe.settle(srv.pid)
        before = segs()
        a = probe.proc(srv.pid)[0]
        probe.call("DELETE", f"/v1/spaces/scale-speakers/sessions/f{k}/messages/0")
        b = probe.proc(srv.pid)[0]
        probe.settle(srv.pid)
        after = segs()
        gone = sorted(before[s] for s in before if s not in after)
        print(f"forget {k:2}: cpu {(b - a) / 1e6:6.1f} ms; segments rewritten (documents): {gone}; "
              f"segments before {sorted(before.values())}", flush=True)
finally:
    srv.terminate()
