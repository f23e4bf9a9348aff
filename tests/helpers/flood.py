#!/usr/bin/env python3
"""flood.py: open many watches and idle connections against a cueue server
from one client address, for the connection-flood test (tests/e2e/t1090).

  flood.py HOST PORT --source ADDR --watches N --idle N --watch-path PATH
           [--token TOKEN] [--cafile CA.PEM] [--extra-until-429]

With --cafile every connection speaks TLS, trusting that CA (idle
connections too: they complete the handshake, then send nothing).

Steps, each reported as one JSON line on stdout:
  1. N watch requests (each on its own connection): {"watch_200": a,
     "watch_429": b, "refusal_ok": bool}: a refusal is ok when it is 429
     with a Retry-After header and a Kubernetes Status body
     (reason TooManyRequests).
  2. N idle connections that send nothing: {"idle_open": n}.
  3. with --extra-until-429: one more connection with a GET, repeated
     (polling, 0.1 s apart, up to 30 s) until it is refused:
     {"extra_429": bool, "refusal_ok": bool}.
Then it waits for a line on stdin ("check NAME"): it reads every accepted
watch until NAME appears in its stream (up to 60 s in all) and answers
{"watches_saw": count}. End of stdin closes everything.
Plain HTTP/1.1 over sockets: no third-party modules.
"""
import argparse
import json
import resource
import socket
import ssl
import sys
import time

TLS = None  # an ssl.SSLContext with --cafile


def connect(host, port, source):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.connect((host, port))
    if TLS:
        s = TLS.wrap_socket(s, server_hostname=host)
    return s


def request(path, host, port, token):
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}:{port}", "Accept: application/json"]
    if token:
        lines.append(f"Authorization: Bearer {token}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def read_head(s, timeout=30.0):
    """Read until the end of the response headers; returns (status, headers
    dict, rest of the bytes read)."""
    s.settimeout(timeout)
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and len(lines[0].split()) > 1 else 0
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, rest


def read_body(s, headers, rest, timeout=10.0):
    """The rest of a non-streamed body (Content-Length or chunked or EOF)."""
    s.settimeout(timeout)
    body = rest
    want = int(headers.get("content-length", "-1"))
    try:
        while want < 0 or len(body) < want:
            chunk = s.recv(65536)
            if not chunk:
                break
            body += chunk
            if want < 0 and body.endswith(b"0\r\n\r\n"):
                break
    except socket.timeout:
        pass
    if headers.get("transfer-encoding", "") == "chunked":
        out, data = b"", body
        while data:
            size_line, _, data = data.partition(b"\r\n")
            size = int(size_line or b"0", 16)
            if size == 0:
                break
            out, data = out + data[:size], data[size + 2:]
        body = out
    return body


def refusal_ok(status, headers, body):
    if status != 429 or "retry-after" not in headers:
        return False
    try:
        st = json.loads(body)
    except ValueError:
        return False
    return st.get("kind") == "Status" and st.get("reason") == "TooManyRequests" \
        and st.get("code") == 429


def say(obj):
    print(json.dumps(obj), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("--source", default="127.0.0.2")
    ap.add_argument("--watches", type=int, default=0)
    ap.add_argument("--idle", type=int, default=0)
    ap.add_argument("--watch-path", default="/api/v1/namespaces?watch=true")
    ap.add_argument("--token", default="")
    ap.add_argument("--cafile", default="")
    ap.add_argument("--extra-until-429", action="store_true")
    a = ap.parse_args()
    global TLS
    if a.cafile:
        TLS = ssl.create_default_context(cafile=a.cafile)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    # 1. watches: send in batches, then read each answer's head
    accepted, refused, all_ok = [], 0, True
    batch = 200
    for start in range(0, a.watches, batch):
        socks = []
        for _ in range(min(batch, a.watches - start)):
            s = connect(a.host, a.port, a.source)
            s.sendall(request(a.watch_path, a.host, a.port, a.token))
            socks.append(s)
        for s in socks:
            status, headers, rest = read_head(s)
            if status == 200:
                accepted.append([s, rest])
            else:
                refused += 1
                body = read_body(s, headers, rest)
                if not refusal_ok(status, headers, body):
                    all_ok = False
                    sys.stderr.write(f"refusal not as expected: {status} {headers} {body[:300]}\n")
                s.close()
    say({"watch_200": len(accepted), "watch_429": refused, "refusal_ok": all_ok})

    # 2. idle connections
    idle = [connect(a.host, a.port, a.source) for _ in range(a.idle)]
    say({"idle_open": len(idle)})

    # 3. one more request on a new connection until it is refused
    if a.extra_until_429:
        got, ok = False, False
        deadline = time.monotonic() + 30
        while not got and time.monotonic() < deadline:
            s = connect(a.host, a.port, a.source)
            s.sendall(request("/version", a.host, a.port, a.token))
            status, headers, rest = read_head(s)
            body = read_body(s, headers, rest)
            s.close()
            if status == 429:
                got, ok = True, refusal_ok(status, headers, body)
            else:
                time.sleep(0.1)
        say({"extra_429": got, "refusal_ok": ok})

    for line in sys.stdin:
        words = line.split()
        if len(words) != 2 or words[0] != "check":
            continue
        needle = words[1].encode()
        deadline = time.monotonic() + 60
        saw = 0
        for w in accepted:  # each stream in turn, until the deadline
            while needle not in w[1]:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                w[0].settimeout(left)
                try:
                    chunk = w[0].recv(65536)
                except (socket.timeout, ssl.SSLError, OSError):
                    break
                if not chunk:
                    break
                w[1] = (w[1] + chunk)[-65536:]
            if needle in w[1]:
                saw += 1
        say({"watches_saw": saw})
    for w in accepted:
        w[0].close()
    for s in idle:
        s.close()


if __name__ == "__main__":
    main()
