"""A server on 127.0.0.1 that misbehaves with byte ranges, for the tests
of learning shards from their headers:

    rangeserver.py ROOT MODE [N]

MODE: "ignore-after" answers the first N ranged GETs of a file, then the
whole file; "head-bigger"/"head-smaller": a HEAD says 8192 bytes more /
1024 bytes less than the file holds; "stall": the ranged GETs of a file
after the first N never send their body; "get-shorter": a HEAD says the
file's size, its GETs (200s with a correct Content-Length, ranges within
what is left) give only its samples before the one at 60% of its size, cut
at that sample's first header (no end-of-archive blocks); "html": every
file is a login page (status 200, Content-Type text/html); "gzip-encoded":
every file comes gzipped with Content-Encoding: gzip (whatever the request
accepts); "no-validators": no ETag (nor Last-Modified), ranges
answered; "refuse-head": every HEAD answered 403 (presigned GET URLs,
some CDNs), GETs served; "missing-403": a file that is not there is
refused with S3's 403 AccessDenied, as S3 answers a caller without
s3:ListBucket over https:// (a public bucket). Modes joined by "+" apply
together. Prints its port first."""
import http.server, os, re, sys, tarfile, threading, collections, gzip
root, modes = sys.argv[1], set(sys.argv[2].split("+"))
N = int(sys.argv[3]) if len(sys.argv) > 3 else 2
count = collections.Counter()
lock = threading.Lock()
def member_cut(path, size):
    """The offset of the first header of the first sample (a key
    WebDataset's way) at 60% of the tar on."""
    with tarfile.open(path) as tar:
        last = None
        for m in tar.getmembers():
            key = m.name.split(".", 1)[0]
            if m.offset >= 0.6 * size and key != last:
                return m.offset
            last = key
    return size
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def _file(self):
        # a presigned URL's query names no other file
        p = os.path.join(root, self.path.split("?", 1)[0].lstrip("/"))
        if not os.path.isfile(p) and "missing-403" in modes:
            body = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>'
                    b'AccessDenied</Code><Message>Access Denied</Message></Error>')
            self.send_response(403); self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body))); self.end_headers()
            if self.command == "GET": self.wfile.write(body)
            return None
        if not os.path.isfile(p):
            self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers(); return None
        d = open(p, "rb").read()
        if "html" in modes:
            return b"<!DOCTYPE html><html><body>Please sign in</body></html>\n"
        if "gzip-encoded" in modes:
            return gzip.compress(d, mtime=0)
        return d[:member_cut(p, len(d))] if self.command == "GET" and "get-shorter" in modes else d
    def kind(self):
        if "html" in modes:
            self.send_header("Content-Type", "text/html; charset=utf-8")
        elif "gzip-encoded" in modes:
            self.send_header("Content-Type", "application/x-tar")
            self.send_header("Content-Encoding", "gzip")
    def do_HEAD(self):
        if "refuse-head" in modes:
            self.send_response(403); self.send_header("Content-Length", "0"); self.end_headers(); return
        d = self._file()
        if d is None: return
        size = len(d)
        if "head-bigger" in modes: size += 8192
        if "head-smaller" in modes: size -= 1024
        self.send_response(200)
        self.send_header("Content-Length", str(size))
        self.send_header("Accept-Ranges", "bytes")
        if "no-validators" not in modes:
            self.send_header("ETag", '"e1"')
        self.kind()
        self.end_headers()
    def do_GET(self):
        d = self._file()
        if d is None: return
        r = self.headers.get("Range")
        with lock:
            count[self.path] += 1 if r else 0
            c = count[self.path]
        m = re.match(r"bytes=(\d+)-(\d*)", r or "")
        if m and not ("ignore-after" in modes and c > N):
            a = int(m.group(1)); b = int(m.group(2)) if m.group(2) else len(d) - 1
            if a >= len(d):
                self.send_response(416); self.send_header("Content-Range", "bytes */%d" % len(d))
                self.send_header("Content-Length", "0"); self.end_headers(); return
            b = min(b, len(d) - 1)
            body = d[a:b + 1]
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (a, b, len(d)))
        else:
            body = d
            self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        if "no-validators" not in modes:
            self.send_header("ETag", '"e1"')
        self.kind()
        self.end_headers()
        if "stall" in modes and m and c > N:
            import time; time.sleep(3600)
        self.wfile.write(body)
# a backlog of 5 (socketserver's) drops the SYNs of 64 shards walked at
# once, and the kernel tries them again 1 s and 3 s later
http.server.ThreadingHTTPServer.request_queue_size = 1024
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print("port %d" % s.server_address[1], flush=True)
s.serve_forever()
