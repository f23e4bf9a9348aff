#!/usr/bin/env python3
"""crash_driver: the client side of tests/crash/crash-test.sh.

Talks to a `cueue server` whose state directory is given (it reads the
server's URL, and a bearer token and CA when the kubeconfig there has them,
again after every failed request, since each restart of the server picks a
new port). Subcommands:

  submit STATE N CLIENTS PREFIX RUNLOG LIVEDIR ACKFILE
      create Jobs PREFIX-0..N-1 (namespace default, queue q, one pod of
      250m CPU, restartPolicy Never) from CLIENTS threads. A Job is retried
      until the server answers; it is acknowledged (its name appended to
      ACKFILE) on 201, or on 409 AlreadyExists after a retry (an earlier
      attempt was stored and its answer lost in a crash). Each container
      appends "JOB POD" to RUNLOG (outside the server's state directory),
      keeps the file LIVEDIR/POD while it runs, sleeps up to 0.3 s.
  sample STATE CQ NOMINAL_MILLI REQUEST_MILLI LIVEDIR STOPFILE OUT
      until STOPFILE exists: every 50 ms count the running containers
      (LIVEDIR) and, when the server answers, the ClusterQueue's usage; write
      "samples N max_live M max_usage_milli U violations V" to OUT, and one
      line per sample over the quota (live * REQUEST_MILLI > NOMINAL_MILLI,
      or usage > NOMINAL_MILLI).
  complete STATE N
      succeed when N Jobs are Complete with succeeded 1 (one list request).
  wait-start STATE TIMEOUT_S
      exit 0 once a new pod sandbox appears under STATE/pods (polled every
      5 ms), 1 after TIMEOUT_S without one: the moment to kill the server
      "right after a pod start".
  integrity DB
      print SQLite's PRAGMA integrity_check.
"""
import base64
import http.client
import json
import os
import random
import re
import sqlite3
import ssl
import sys
import threading
import time
import urllib.error
import urllib.request


def endpoint(state):
    """(url, headers, ssl context) of the server now serving state."""
    with open(os.path.join(state, "server.url")) as f:
        url = f.readline().strip()
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    ctx = None
    try:
        with open(os.path.join(state, "kubeconfig")) as f:
            kc = f.read()
    except OSError:
        kc = ""
    tok = os.environ.get("CUEUE_TOKEN") or (re.search(r"^\s*token:\s*\"?([^\s\"]+)", kc, re.M)
                                            or [None, None])[1]
    if tok:
        headers["Authorization"] = "Bearer " + tok
    ca = re.search(r"certificate-authority-data:\s*\"?([^\s\"]+)", kc)
    if url.startswith("https") and ca:
        ctx = ssl.create_default_context(cadata=base64.b64decode(ca.group(1)).decode())
    return url, headers, ctx


def request(state, method, path, body=None, timeout=10):
    """(status, parsed body) or (None, None) when the server cannot be reached."""
    try:
        url, headers, ctx = endpoint(state)
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url + path, data=data, method=method, headers=headers)
        with urllib.request.urlopen(req, timeout=timeout, context=ctx) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read() or b"{}")
        except ValueError:
            return e.code, {}
    except (OSError, ValueError, http.client.HTTPException):
        # a server killed mid-answer (over TLS: mid-handshake or mid-body)
        return None, None


def job(name, runlog, live):
    script = ('echo "%s $HOSTNAME" >> %s; touch %s/$HOSTNAME; sleep 0.%d; rm -f %s/$HOSTNAME'
              % (name, runlog, live, random.randint(0, 3), live))
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": "q"}},
        "spec": {"backoffLimit": 6, "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "busybox", "command": ["sh", "-c", script],
                            "resources": {"requests": {"cpu": "250m"}}}]}}},
    }


def submit(state, n, clients, prefix, runlog, live, ackfile):
    lock = threading.Lock()
    names = ["%s-%d" % (prefix, i) for i in range(int(n))]
    errors = []

    def worker(mine):
        for name in mine:
            tries = 0
            while True:
                tries += 1
                st, body = request(state, "POST", "/apis/batch/v1/namespaces/default/jobs",
                                   job(name, runlog, live))
                if st == 201 or (st == 409 and tries > 1 and
                                 (body or {}).get("reason") == "AlreadyExists"):
                    with lock, open(ackfile, "a") as f:
                        f.write(name + "\n")
                    break
                if st is not None and st < 500 and st != 429:
                    errors.append("%s: HTTP %s %s" % (name, st, body))
                    break
                time.sleep(0.05)  # the server is down or restarting

    threads = [threading.Thread(target=worker, args=(names[i::int(clients)],))
               for i in range(int(clients))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


def quantity_milli(q):
    q = str(q)
    if q.endswith("m"):
        return int(q[:-1])
    return int(float(q) * 1000)


def sample(state, cq, nominal, request_milli, live, stopfile, out):
    nominal, request_milli = int(nominal), int(request_milli)
    n = max_live = max_usage = 0
    bad = []
    while not os.path.exists(stopfile):
        n += 1
        running = len(os.listdir(live))
        max_live = max(max_live, running)
        if running * request_milli > nominal:
            bad.append("%d containers running: %d milli-CPU > nominal %d" %
                       (running, running * request_milli, nominal))
        st, body = request(state, "GET", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/" + cq,
                           timeout=2)
        if st == 200:
            status = body.get("status") or {}
            for fl in (status.get("flavorsUsage") or []) + (status.get("flavorsReservation") or []):
                for r in fl.get("resources") or []:
                    if r.get("name") == "cpu":
                        u = quantity_milli(r.get("total", 0))
                        max_usage = max(max_usage, u)
                        if u > nominal:
                            bad.append("ClusterQueue usage %d milli-CPU > nominal %d" %
                                       (u, nominal))
        time.sleep(0.05)
    with open(out, "w") as f:
        f.write("samples %d max_live %d max_usage_milli %d violations %d\n" %
                (n, max_live, max_usage, len(bad)))
        for b in bad:
            f.write(b + "\n")
    return 0


def complete(state, n):
    st, body = request(state, "GET", "/apis/batch/v1/namespaces/default/jobs", timeout=30)
    if st != 200:
        return 1
    done = sum(1 for j in body.get("items") or []
               if (j.get("status") or {}).get("succeeded") == 1 and
               any(c.get("type") == "Complete" and c.get("status") == "True"
                   for c in (j.get("status") or {}).get("conditions") or []))
    return 0 if done == int(n) else 1


def wait_start(state, timeout):
    pods = os.path.join(state, "pods")
    seen = set(os.listdir(pods)) if os.path.isdir(pods) else set()
    end = time.monotonic() + float(timeout)
    while time.monotonic() < end:
        if os.path.isdir(pods) and set(os.listdir(pods)) - seen:
            return 0
        time.sleep(0.005)
    return 1


def integrity(db):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    print("\n".join(r[0] for r in con.execute("PRAGMA integrity_check")))
    con.close()
    return 0


def main(argv):
    cmds = {"submit": submit, "sample": sample, "complete": complete, "wait-start": wait_start,
            "integrity": integrity}
    if len(argv) < 2 or argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    return cmds[argv[1]](*argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
