#!/usr/bin/env python3
"""A registry front for berth's bearer-token tests: /token hands out a token to a client that
presents the right basic credentials (GET) or the refresh token "refresh-<password>" (POST); /v2/... answers 401 with a Bearer challenge unless the
request carries that token, and otherwise forwards the request to the real registry behind it.

Usage: token-proxy.py <listen port> <backend base URL> <user> <password>
"""
import base64, http.client, http.server, json, secrets, sys, urllib.parse

PORT, BACKEND, USER, PASSWORD = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
TOKENS = set()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, body=b"", headers=None):
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
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
        if not (auth.startswith("Bearer ") and auth[7:] in TOKENS):
            repo = url.path.split("/manifests/")[0].split("/blobs/")[0][len("/v2/"):]
            challenge = (f'Bearer realm="http://127.0.0.1:{PORT}/token",service="berth-test",'
                         f'scope="repository:{repo}:pull"')
            return self.reply(401, b'{"errors":[{"code":"UNAUTHORIZED","message":"token required"}]}',
                              {"WWW-Authenticate": challenge, "Content-Type": "application/json"})
        backend = urllib.parse.urlparse(BACKEND)
        conn = http.client.HTTPConnection(backend.hostname, backend.port, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() in ("accept",)}
        conn.request(self.command, self.path, headers=headers)
        resp = conn.getresponse()
        body = resp.read()
        keep = {k: v for k, v in resp.getheaders() if k.lower() in ("content-type", "docker-content-digest", "location")}
        self.reply(resp.status, body, keep)


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
