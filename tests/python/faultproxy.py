#!/usr/bin/python3
"""A fault-injecting HTTP proxy for the remote-data tests, on 127.0.0.1.

    faultproxy.py UPSTREAM [--fail-first N] [--status-first CODE] [--reset-first N]
                  [--truncate-first N] [--delay-ms D] [--status SUBSTR=CODE]
                  [--hang SUBSTR] [--throttle-after BYTES] [--log FILE]
                  [--change SUBSTR] [--ignore-if-range] [--bad-range]
                  [--claim-ranges] [--refuse-head CODE]

Forwards GET requests to UPSTREAM (http://host:port, e.g. http.server or
moto_server; headers such as Range and the SigV4 ones pass through), or
serves the files of UPSTREAM when it is a folder (HTTP/1.1 keep-alive, a
deep listen queue, single byte ranges as object stores answer them: the
benchmarks' server, faster than http.server), and
breaks them on purpose, per path: the first N requests of each path get a
503 (or --status-first), or the connection reset after half the body, or
half the body and a clean close (a truncated response); every response is
delayed; paths containing SUBSTR always get CODE, or never an answer
(--hang); --throttle-after sends the rest of a body a few bytes a second.
From a folder it answers Range requests (bytes=N-) with a 206, validated by
If-Range against its ETag and Last-Modified (a 200 with the whole when they
do not match; --ignore-if-range: never checked); --change makes the files
of matching paths change after the first request (another size, ETag and
Last-Modified); --bad-range starts each 206's Content-Range one byte early;
--claim-ranges adds "Accept-Ranges: bytes" to every answer (a server
that claims Range support and may not have it); --refuse-head answers
every HEAD with CODE (presigned GET URLs and some CDNs refuse HEAD with
403, others 405) and serves GETs.
HEAD requests (a shard's size and validators) are answered the same way
without a body, and get only the per-path faults (--status, --hang).
Prints its port on the first line of stdout; each request goes to --log
("PATH RANGE N IF-RANGE", and " HEAD" after a HEAD's).
"""
import argparse
import collections
import email.utils
import http.client
import http.server
import os
import re
import socket
import struct
import sys
import threading
import time
import urllib.parse


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("upstream")
    ap.add_argument("--fail-first", type=int, default=0)
    ap.add_argument("--status-first", type=int, default=503)
    ap.add_argument("--reset-first", type=int, default=0)
    ap.add_argument("--truncate-first", type=int, default=0)
    ap.add_argument("--delay-ms", type=float, default=0)
    ap.add_argument("--status", action="append", default=[])
    ap.add_argument("--hang", action="append", default=[])
    ap.add_argument("--throttle-after", type=int, default=-1)
    ap.add_argument("--log")
    ap.add_argument("--change", action="append", default=[])
    ap.add_argument("--ignore-if-range", action="store_true")
    ap.add_argument("--bad-range", action="store_true")
    ap.add_argument("--claim-ranges", action="store_true")
    ap.add_argument("--refuse-head", type=int, default=0)
    args = ap.parse_args()
    folder = args.upstream if os.path.isdir(args.upstream) else None
    up = urllib.parse.urlsplit(args.upstream)
    statuses = [s.rsplit("=", 1) for s in args.status]
    seen = collections.Counter()
    lock = threading.Lock()
    log = open(args.log, "a", buffering=1) if args.log else None

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def setup(self):
            super().setup()
            # headers and body go out in two writes: no Nagle delay
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def fetch(self, path, n, method="GET"):
            """(status, headers, body) from the folder or the upstream."""
            if folder:
                full = os.path.join(folder, urllib.parse.unquote(path).lstrip("/"))
                try:
                    with open(full, "rb") as f:
                        body = f.read()
                    mtime = int(os.stat(full).st_mtime)
                except OSError:
                    return 404, [], b"not found\n"
                if n > 1 and any(sub in path for sub in args.change):
                    body += b"\0" * 1024   # another version: a longer tar
                    mtime += 3600
                return self.ranged(body, mtime)
            conn = http.client.HTTPConnection(up.hostname, up.port, timeout=60)
            headers = {k: v for k, v in self.headers.items()
                       if k.lower() not in ("connection", "keep-alive")}
            conn.request(method, self.path, headers=headers)
            resp = conn.getresponse()
            body = resp.read()
            if method == "HEAD":
                length = resp.getheader("Content-Length", "0")
                resp_headers = [h for h in resp.getheaders()
                                if h[0].lower() != "content-length"]
                conn.close()
                return resp.status, resp_headers, int(length)
            conn.close()
            return resp.status, resp.getheaders(), body

        def ranged(self, body, mtime):
            """A 200, or a 206 for a satisfiable Range that If-Range allows."""
            etag = '"%x-%x"' % (len(body), mtime)
            modified = email.utils.formatdate(mtime, usegmt=True)
            headers = [("ETag", etag), ("Last-Modified", modified),
                       ("Accept-Ranges", "bytes")]
            m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
            if_range = self.headers.get("If-Range")
            if (m and int(m.group(1)) < len(body) and
                    (if_range in (None, etag, modified) or args.ignore_if_range)):
                first = int(m.group(1)) - (1 if args.bad_range else 0)
                last = min(int(m.group(2)), len(body) - 1) if m.group(2) else len(body) - 1
                headers.append(("Content-Range", "bytes %d-%d/%d"
                                % (first, last, len(body))))
                return 206, headers, body[first:last + 1]
            return 200, headers, body

        def reset(self):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True

        def plain(self, code):
            body = b"fault injected\n"
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_HEAD(self):
            path = urllib.parse.urlsplit(self.path).path
            with lock:
                seen[("HEAD", path)] += 1
                n = seen[("HEAD", path)]
            if log:
                log.write("%s - %d - HEAD\n" % (path, n))
            for sub in args.hang:
                if sub in path:
                    time.sleep(3600)
            status, resp_headers, body = 404, [], b""
            for sub, code in statuses + ([("", args.refuse_head)]
                                         if args.refuse_head else []):
                if sub in path:
                    status = int(code)
                    break
            else:
                status, resp_headers, body = self.fetch(path, seen[path] + 1,
                                                        "HEAD")
            self.send_response(status)
            for k, v in resp_headers:
                if k.lower() not in ("connection", "keep-alive", "transfer-encoding",
                                     "content-length", "date", "server",
                                     "content-range"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(
                body if isinstance(body, int) else len(body)))
            self.end_headers()

        def do_GET(self):
            path = urllib.parse.urlsplit(self.path).path
            with lock:
                seen[path] += 1
                n = seen[path]
            if log:
                log.write("%s %s %d %s\n" % (path, self.headers.get("Range", "-"), n,
                                             self.headers.get("If-Range", "-")))
            if args.delay_ms:
                time.sleep(args.delay_ms / 1000)
            for sub in args.hang:
                if sub in path:
                    time.sleep(3600)
            for sub, code in statuses:
                if sub in path:
                    return self.plain(int(code))
            if n <= args.fail_first:
                return self.plain(args.status_first)
            status, resp_headers, body = self.fetch(path, n)
            self.send_response(status)
            for k, v in resp_headers:
                if k.lower() not in ("connection", "keep-alive", "transfer-encoding",
                                     "content-length", "date", "server"):
                    self.send_header(k, v)
            if args.claim_ranges and not any(k.lower() == "accept-ranges"
                                             for k, _ in resp_headers):
                self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if n <= args.reset_first and len(body) > 1:
                self.wfile.write(body[:len(body) // 2])
                self.wfile.flush()
                return self.reset()
            if n <= args.reset_first + args.truncate_first and len(body) > 1:
                self.wfile.write(body[:len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            if args.throttle_after >= 0:
                self.wfile.write(body[:args.throttle_after])
                self.wfile.flush()
                for i in range(args.throttle_after, len(body), 16):
                    time.sleep(1)
                    self.wfile.write(body[i:i + 16])
                    self.wfile.flush()
                return
            self.wfile.write(body)

    # many clients connect at once (64 requests in flight)
    http.server.ThreadingHTTPServer.request_queue_size = 1024
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
