#!/usr/bin/env python3
"""A registry that misbehaves on purpose, for berth's bound tests. Every manifest request gets:
  --layers N       an OCI manifest naming N layers (distinct made-up digests) and a small config
  --huge MiB       a 200 answer whose body is that many MiB of JSON-looking bytes, sent as fast as
                   the client reads
  --trickle S      a 200 answer whose body comes one byte every S seconds, for ever
Blob requests are answered 404 and counted. GET /_stats answers {"manifests": n, "blobs": n,
"open": connections now open}.
Usage: hostile-registry.py <port> (--layers N | --huge MiB | --trickle S)"""
import argparse, hashlib, http.server, json, threading, time

ap = argparse.ArgumentParser()
ap.add_argument("port", type=int)
ap.add_argument("--layers", type=int)
ap.add_argument("--huge", type=int)
ap.add_argument("--trickle", type=float)
ARGS = ap.parse_args()
LOCK = threading.Lock()
STATS = {"manifests": 0, "blobs": 0, "open": 0}


def digest(i):
    return "sha256:" + hashlib.sha256(str(i).encode()).hexdigest()


def many_layers(n):
    layers = [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": digest(i), "size": 32} for i in range(n)]
    return json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                       "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digest("config"),
                                  "size": 100},
                       "layers": layers}).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def count(self, key, n=1):
        with LOCK:
            STATS[key] += n

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        if self.path == "/_stats":
            return self.answer()
        self.count("open")
        try:
            self.answer()
        except OSError:
            pass
        finally:
            self.count("open", -1)

    def answer(self):
        if self.path == "/_stats":
            with LOCK:
                body = json.dumps(STATS).encode()
            return self.send(200, body, "application/json")
        if "/blobs/" in self.path:
            self.count("blobs")
            return self.send(404, b'{"errors":[{"code":"BLOB_UNKNOWN","message":"no"}]}', "application/json")
        if "/manifests/" not in self.path:
            return self.send(200 if self.path == "/v2/" else 404, b"{}", "application/json")
        self.count("manifests")
        media = "application/vnd.oci.image.manifest.v1+json"
        if ARGS.layers is not None:
            return self.send(200, many_layers(ARGS.layers), media)
        size = (ARGS.huge or 1) << 20 if ARGS.huge is not None else 1 << 30
        self.send_response(200)
        self.send_header("Content-Type", media)
        self.send_header("Content-Length", str(size))
        self.end_headers()
        if self.command == "HEAD":
            return
        if ARGS.huge is not None:
            chunk = b'{"a":"' + b"x" * 65520 + b'"}\n'
            sent = 0
            while sent < size:
                piece = chunk[:min(len(chunk), size - sent)]
                self.wfile.write(piece)
                sent += len(piece)
            return
        while True:
            time.sleep(ARGS.trickle)
            self.wfile.write(b" ")
            self.wfile.flush()

    def send(self, code, body, ctype):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


server = http.server.ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
server.daemon_threads = True
server.serve_forever()
