#!/usr/bin/env python3
"""A registry front for berth's tests. /token hands out a token to a client that presents the
right basic credentials (GET) or the refresh token "refresh-<password>" (POST); /v2/... answers 401
with a Bearer challenge unless the request carries that token, and otherwise forwards the request
to the real registry behind it. With user "-" no token is asked for.

Test controls (the proxy stands in for a registry misbehaving or slow on cue):
  --hold S           a /v2/ GET whose path ends with S waits until GET /_release
  --serve-instead D=P  a manifest request for digest D is answered with the backend's answer for
                     path P, so the bytes do not hash to D
  --realm URL        the realm its Bearer challenges name (default: its own /token over http)
  --redirect-blobs URL  every blob GET is answered with a redirect to URL
  --deny             every /v2/ request is answered 401 with a Basic challenge (a mirror that
                     wants credentials)
  --cut-blobs-at F --cuts N [--cut-min-size B]  the first N GETs of blobs of at least B bytes
                     send their headers and the blob's bytes up to the fraction F of the whole blob
                     (counted from its start, also in a range answer), then drop the connection
Range headers go to the backend and its Content-Range comes back, unless --no-range (a registry
that always answers with the whole blob).
GET /_stats answers {"requests": {"GET /v2/...": count, ...}, "held": requests waiting now,
"authorization": [every Authorization header a /v2/ request carried], "served": {blob path: body
bytes sent}, "cuts_left": N, "connections": how many TCP connections carried /v2/ requests (it keeps
connections open between requests, as registries do)}. With user "-" a request's
Authorization goes on to the backend, and its WWW-Authenticate comes back.

Usage: token-proxy.py <listen port> <backend base URL> <user> <password> [options]
"""
import argparse, base64, http.client, http.server, json, re, secrets, socket, threading, urllib.parse

ap = argparse.ArgumentParser()
ap.add_argument("port", type=int)
ap.add_argument("backend")
ap.add_argument("user")
ap.add_argument("password")
ap.add_argument("--hold", action="append", default=[])
ap.add_argument("--serve-instead", action="append", default=[])
ap.add_argument("--realm", default="")
ap.add_argument("--redirect-blobs", default="")
ap.add_argument("--deny", action="store_true")
ap.add_argument("--cut-blobs-at", type=float, default=0.0)
ap.add_argument("--cuts", type=int, default=0)
ap.add_argument("--cut-min-size", type=int, default=0)
ap.add_argument("--no-range", action="store_true")
ARGS = ap.parse_args()
PORT, BACKEND, USER, PASSWORD = ARGS.port, ARGS.backend, ARGS.user, ARGS.password
INSTEAD = dict(s.split("=", 1) for s in ARGS.serve_instead)
TOKENS = set()
LOCK = threading.Lock()
COUNTS = {}
HELD = [0]
SERVED = {}
CUTS = [ARGS.cuts]
AUTHORIZATION = []
CONNECTIONS = set()  # the numbers of the connections that carried /v2/ requests
ACCEPTED = [0]
RELEASED = threading.Event()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def setup(self):  # once per connection
        super().setup()
        with LOCK:
            ACCEPTED[0] += 1
            self.connection_number = ACCEPTED[0]

    def reply(self, code, body=b"", headers=None, length=None):
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        self.handle_any()

    def do_HEAD(self):
        self.handle_any()

    def do_POST(self):
        # OAuth2 refresh-token grant: the identity token docker clients keep after a login.
        url = urllib.parse.urlparse(self.path)
        length = int(self.headers.get("Content-Length", "0"))
        form = urllib.parse.parse_qs(self.rfile.read(length).decode())
        if url.path != "/token" or form.get("grant_type") != ["refresh_token"]:
            return self.reply(400, b'{"details":"unsupported grant"}')
        if form.get("refresh_token") != [f"refresh-{PASSWORD}"] or form.get("service") != ["berth-test"]:
            return self.reply(401, b'{"details":"bad refresh token"}')
        token = secrets.token_hex(16)
        TOKENS.add(token)
        return self.reply(200, json.dumps({"access_token": token}).encode(), {"Content-Type": "application/json"})

    def handle_any(self):
        url = urllib.parse.urlparse(self.path)
        if url.path == "/_stats":
            with LOCK:
                body = json.dumps({"requests": COUNTS, "held": HELD[0], "authorization": AUTHORIZATION,
                                   "served": SERVED, "cuts_left": CUTS[0],
                                   "connections": len(CONNECTIONS)}).encode()
            return self.reply(200, body, {"Content-Type": "application/json"})
        if url.path == "/_release":
            RELEASED.set()
            return self.reply(200)
        if url.path == "/token":
            want = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
            if self.headers.get("Authorization") != want:
                return self.reply(401, b'{"details":"bad credentials"}')
            q = urllib.parse.parse_qs(url.query)
            if q.get("service") != ["berth-test"] or not q.get("scope", [""])[0].startswith("repository:"):
                return self.reply(400, b'{"details":"bad service or scope"}')
            token = secrets.token_hex(16)
            TOKENS.add(token)
            return self.reply(200, json.dumps({"token": token}).encode(), {"Content-Type": "application/json"})
        auth = self.headers.get("Authorization", "")
        if url.path.startswith("/v2/"):
            with LOCK:
                CONNECTIONS.add(self.connection_number)
        if url.path.startswith("/v2/") and auth:
            with LOCK:
                AUTHORIZATION.append(auth)
        if ARGS.deny:
            return self.reply(401, b'{"errors":[{"code":"UNAUTHORIZED","message":"credentials required"}]}',
                              {"WWW-Authenticate": 'Basic realm="mirror"', "Content-Type": "application/json"})
        if USER != "-" and not (auth.startswith("Bearer ") and auth[7:] in TOKENS):
            repo = url.path.split("/manifests/")[0].split("/blobs/")[0][len("/v2/"):]
            realm = ARGS.realm or f"http://127.0.0.1:{PORT}/token"
            challenge = (f'Bearer realm="{realm}",service="berth-test",'
                         f'scope="repository:{repo}:pull"')
            return self.reply(401, b'{"errors":[{"code":"UNAUTHORIZED","message":"token required"}]}',
                              {"WWW-Authenticate": challenge, "Content-Type": "application/json"})
        with LOCK:
            key = f"{self.command} {url.path}"
            COUNTS[key] = COUNTS.get(key, 0) + 1
        if self.command == "GET" and any(url.path.endswith(h) for h in ARGS.hold) and not RELEASED.is_set():
            with LOCK:
                HELD[0] += 1
            RELEASED.wait(120)
            with LOCK:
                HELD[0] -= 1
        if ARGS.redirect_blobs and "/blobs/" in url.path:
            return self.reply(307, b"", {"Location": ARGS.redirect_blobs})
        path = self.path
        if "/manifests/" in url.path and url.path.rsplit("/", 1)[1] in INSTEAD:
            path = INSTEAD[url.path.rsplit("/", 1)[1]]
        backend = urllib.parse.urlparse(BACKEND)
        conn = http.client.HTTPConnection(backend.hostname, backend.port, timeout=60)
        forwarded = ("accept", "authorization", "range") if USER == "-" else ("accept", "range")
        if ARGS.no_range:
            forwarded = tuple(h for h in forwarded if h != "range")
        headers = {k: v for k, v in self.headers.items() if k.lower() in forwarded}
        conn.request(self.command, path, headers=headers)
        resp = conn.getresponse()
        body = resp.read()
        keep = {k: v for k, v in resp.getheaders()
                if k.lower() in ("content-type", "docker-content-digest", "location", "www-authenticate",
                                 "content-range")}
        if self.command == "GET" and "/blobs/" in url.path and resp.status in (200, 206):
            # The blob's place in the whole: a range answer says where it starts and the total.
            start, total = 0, len(body)
            m = re.match(r"bytes (\d+)-\d+/(\d+)", resp.getheader("Content-Range") or "")
            if resp.status == 206 and m:
                start, total = int(m.group(1)), int(m.group(2))
            with LOCK:
                cut = CUTS[0] > 0 and total >= max(1, ARGS.cut_min_size)
                if cut:
                    CUTS[0] -= 1
            if cut:
                # Headers for the whole answer, then the bytes up to the cut, then the connection
                # drops: a link that broke midway.
                n = max(0, min(len(body), int(total * ARGS.cut_blobs_at) - start))
                self.send_response(resp.status)
                for k, v in keep.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[:n])
                self.wfile.flush()
                with LOCK:
                    SERVED[url.path] = SERVED.get(url.path, 0) + n
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            with LOCK:
                SERVED[url.path] = SERVED.get(url.path, 0) + len(body)
        # A HEAD answer has no body, but its length is the resource's (clients size manifests by it).
        self.reply(resp.status, body, keep, resp.getheader("Content-Length") if self.command == "HEAD" else None)


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
