#!/usr/bin/env python3
# Writes the seed corpora of tests/fuzz/corpus/<harness>/ from protocol facts: small, real inputs
# in the layout each harness reads (see the comment at the top of each fuzz_<name>.cc). The files
# are committed; rerun this after changing a harness's input layout. Regression seeds
# (regression-*) are found inputs and are left alone.
import hashlib
import io
import json
import os
import re
import struct
import sys
import tarfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "corpus")


def spdy_dictionary():
    text = open(os.path.join(ROOT, "streaming", "spdy_dictionary.cc")).read()
    body = text[text.index("kHeaderDictionary[] = {") : text.index("};")]
    return bytes(int(h, 16) for h in re.findall(r"0x([0-9a-fA-F]{2})", body))


DICT = spdy_dictionary()


def write(harness, name, data):
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- SPDY/3.1 ----
def header_block(headers):
    out = struct.pack(">I", len(headers))
    for k, v in headers:
        k, v = k.encode(), v.encode()
        out += struct.pack(">I", len(k)) + k + struct.pack(">I", len(v)) + v
    return out


class Compressor:
    """One zlib context per direction, as SPDY keeps it for a connection's life."""

    def __init__(self):
        self.z = zlib.compressobj(9, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY, DICT)

    def block(self, headers):
        return self.z.compress(header_block(headers)) + self.z.flush(zlib.Z_SYNC_FLUSH)


def control(ftype, flags, payload):
    return struct.pack(">HHI", 0x8000 | 3, ftype, (flags << 24) | len(payload)) + payload


def syn_stream(sid, flags, block, priority=0):
    return control(1, flags, struct.pack(">IIBB", sid, 0, priority << 5, 0) + block)


def data_frame(sid, flags, payload):
    return struct.pack(">II", sid, (flags << 24) | len(payload)) + payload


def ping(pid):
    return control(6, 0, struct.pack(">I", pid))


def settings(pairs, flags=0):
    p = struct.pack(">I", len(pairs))
    for sid, value in pairs:
        p += struct.pack(">II", sid, value)
    return control(4, flags, p)


def window_update(sid, delta):
    return control(9, 0, struct.pack(">II", sid, delta))


def rst_stream(sid, status):
    return control(3, 0, struct.pack(">II", sid, status))


def goaway(last, status=0):
    return control(7, 0, struct.pack(">II", last, status))


def headers_frame(sid, block):
    return control(8, 0, struct.pack(">I", sid) + block)


def exec_streams(c, with_resize=False):
    """What kubectl exec sends after the upgrade: error, stdin, stdout, stderr (and resize) streams."""
    frames = b""
    sid = 1
    kinds = ["error", "stdin", "stdout", "stderr"] + (["resize"] if with_resize else [])
    for kind in kinds:
        flags = 0x01 if kind in ("error", "stdout", "stderr") else 0  # FIN: the client writes nothing there
        frames += syn_stream(sid, flags, c.block([("streamtype", kind)]))
        sid += 2
    frames += data_frame(3, 0, b"echo hello\n") + data_frame(3, 0x01, b"")
    if with_resize:
        frames += data_frame(9, 0, b'{"Width":120,"Height":40}')
    return frames


def portforward_streams(c, port="80", request="0"):
    return (syn_stream(1, 0, c.block([("streamtype", "error"), ("port", port), ("requestid", request)])) +
            syn_stream(3, 0, c.block([("streamtype", "data"), ("port", port), ("requestid", request)])) +
            data_frame(3, 0, b"GET / HTTP/1.0\r\n\r\n"))


def spdy():
    c = Compressor()
    write("spdy_frame", "syn_stream", syn_stream(1, 0, c.block([("streamtype", "error")])))
    write("spdy_frame", "ping", ping(1))
    write("spdy_frame", "settings", settings([(7, 1 << 20)]))
    write("spdy_frame", "window_update", window_update(0, 1 << 20))
    write("spdy_frame", "rst_stream", rst_stream(3, 5))
    write("spdy_frame", "goaway", goaway(7))
    write("spdy_frame", "headers", headers_frame(1, Compressor().block([("x", "y")])))
    write("spdy_frame", "data", data_frame(3, 1, b"hello"))
    write("spdy_frame", "exec_session", exec_streams(Compressor(), True))

    write("spdy_session", "exec", exec_streams(Compressor()))
    write("spdy_session", "exec_tty_resize", exec_streams(Compressor(), True) + ping(1) + goaway(9))
    write("spdy_session", "portforward", portforward_streams(Compressor()))
    c = Compressor()
    write("spdy_session", "flow_control",
          settings([(7, 16)]) + syn_stream(1, 0, c.block([("streamtype", "data")])) +
          data_frame(1, 0, b"x" * 64) + window_update(1, 32) + window_update(0, 100) + data_frame(1, 1, b"y" * 40))
    c = Compressor()
    write("spdy_session", "refuse_reset_close",
          syn_stream(1, 0, c.block([("streamtype", "refuse")])) + syn_stream(3, 0, c.block([("streamtype", "data")])) +
          rst_stream(3, 5) + headers_frame(3, c.block([("a", "b")])) + syn_stream(5, 0, c.block([("streamtype", "close")])))

    write("spdy_headers", "raw_block", b"\x00" + header_block([("streamtype", "stdout"), ("port", "8080\x00443")]))
    c = Compressor()
    blocks = [c.block([("streamtype", "error")]), c.block([("streamtype", "stdin")]),
              c.block([("streamtype", "data"), ("port", "80"), ("requestid", "1")])]
    write("spdy_headers", "compressed_series",
          b"\x01\x00\x00" + b"".join(struct.pack(">H", len(b)) + b for b in blocks))
    write("spdy_headers", "compressed_small_limit",
          b"\x01\x01\x01" + struct.pack(">H", len(blocks[0])) + blocks[0])
    lst = b"\x02\x02" + b"\x0astreamtype" + b"\x00\x06stdout" + b"\x04port" + b"\x00\x02" + b"80"
    write("spdy_headers", "round_trip", lst)


# ---- WebSocket ----
def ws():
    write("websocket", "binary_stdin", b"\x00" + b"\x00ls -l\n")
    write("websocket", "resize_message", b"\x00" + b'\x04{"Width":80,"Height":24}')
    write("websocket", "base64_stdout", b"\x00" + b"1aGVsbG8gd29ybGQ=")
    write("websocket", "v5_close", b"\x00" + b"\xff\x00")
    write("websocket", "base64_text", b"\x01" + b"aGVsbG8=")
    write("websocket", "offers", b"\x02" + b"v5.channel.k8s.io, v4.channel.k8s.io,channel.k8s.io")
    write("websocket", "offers_portforward", b"\x02" + b"v4.base64.channel.k8s.io, portforward.k8s.io")
    write("websocket", "resize_stream",
          b"\x03" + b'{"Width":80,"Height":24}\n{"width":100,"height":50}{"Width":"x"} {"Height":70000}')


def ws_frame(payload, opcode=2, mask=b"\x11\x22\x33\x44"):
    n = len(payload)
    if n < 126:
        head = bytes([0x80 | opcode, 0x80 | n])
    else:
        head = bytes([0x80 | opcode, 0x80 | 126]) + struct.pack(">H", n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def http(path, headers, body=b""):
    req = "GET %s HTTP/1.1\r\nHost: 127.0.0.1:10010\r\n" % path
    for k, v in headers:
        req += "%s: %s\r\n" % (k, v)
    return req.encode() + b"\r\n" + body


WS_HEADERS = [("Connection", "Upgrade"), ("Upgrade", "websocket"), ("Sec-WebSocket-Version", "13"),
              ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")]


def http_upgrade():
    spdy_up = [("Connection", "Upgrade"), ("Upgrade", "SPDY/3.1")]
    write("http_upgrade", "exec_spdy_v4",
          http("/exec/@E", spdy_up + [("X-Stream-Protocol-Version", "v4.channel.k8s.io"),
                                      ("X-Stream-Protocol-Version", "v3.channel.k8s.io")]) + exec_streams(Compressor()))
    write("http_upgrade", "attach_spdy_tty",
          http("/attach/@A", spdy_up + [("X-Stream-Protocol-Version", "v5.channel.k8s.io")]) +
          exec_streams(Compressor(), True))
    write("http_upgrade", "portforward_spdy",
          http("/portforward/@P", spdy_up + [("X-Stream-Protocol-Version", "portforward.k8s.io")]) +
          portforward_streams(Compressor()))
    write("http_upgrade", "exec_ws_v5",
          http("/exec/@E?command=sh&stdin=true&stdout=true", WS_HEADERS + [("Sec-WebSocket-Protocol", "v5.channel.k8s.io")]) +
          ws_frame(b"\x00echo hi\n") + ws_frame(b"\xff\x00"))
    write("http_upgrade", "attach_ws_base64",
          http("/attach/@A", WS_HEADERS + [("Sec-WebSocket-Protocol", "base64.channel.k8s.io")]) +
          ws_frame(b'4eyJXaWR0aCI6ODAsIkhlaWdodCI6MjR9', opcode=1))
    write("http_upgrade", "portforward_ws_query",
          http("/portforward/@P?port=80,81&port=8080", WS_HEADERS + [("Sec-WebSocket-Protocol", "v4.channel.k8s.io")]) +
          ws_frame(b"\x00GET /\r\n\r\n"))
    write("http_upgrade", "portforward_ws_ports",
          http("/portforward/@Q", WS_HEADERS + [("Sec-WebSocket-Protocol", "v4.base64.channel.k8s.io")]))
    write("http_upgrade", "unknown_token", http("/exec/AAAAAAAA", spdy_up + [("X-Stream-Protocol-Version", "v4.channel.k8s.io")]))
    write("http_upgrade", "no_protocol", http("/exec/@E", spdy_up))
    write("http_upgrade", "not_an_upgrade", b"POST /exec/@E HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello")
    write("http_upgrade", "wrong_method", b"DELETE /attach/@A HTTP/1.0\r\n\r\n")
    write("http_upgrade", "chunked_body",
          b"GET /exec/@E HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")


# ---- image ----
DIGEST = "sha256:" + hashlib.sha256(b"berth").hexdigest()
CONFIG_DIGEST = "sha256:" + hashlib.sha256(b"config").hexdigest()


def image():
    for name, ref in [("short", "busybox"), ("tagged", "docker.io/library/busybox:1.36"),
                      ("k8s", "registry.k8s.io/pause:3.9"), ("digest", "localhost:5000/team/app@" + DIGEST),
                      ("tag_and_digest", "quay.io/org/app:v1.2.3@" + DIGEST), ("ipv6", "[::1]:5000/x/y:z"),
                      ("index_docker_io", "index.docker.io/user/repo:latest")]:
        write("image_reference", name, ref)

    oci_manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": CONFIG_DIGEST, "size": 1469},
                    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": DIGEST, "size": 2152262}]}
    docker_manifest = dict(oci_manifest, mediaType="application/vnd.docker.distribution.manifest.v2+json")
    docker_manifest["layers"] = [{"mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip", "digest": DIGEST,
                                  "size": 100}]

    def entry(arch, variant=None):
        p = {"architecture": arch, "os": "linux"}
        if variant:
            p["variant"] = variant
        return {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": DIGEST, "size": 528, "platform": p}

    index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
             "manifests": [entry("amd64"), entry("arm64", "v8"), entry("arm", "v7"), entry("arm", "v6")]}
    media = ["", "application/vnd.oci.image.manifest.v1+json", "application/vnd.oci.image.index.v1+json",
             "application/vnd.docker.distribution.manifest.v2+json",
             "application/vnd.docker.distribution.manifest.list.v2+json",
             "application/vnd.docker.distribution.manifest.v1+prettyjws", "application/json", "text/html"]

    def manifest_mode(content_type):  # fuzz_manifest: mode % 4 == 0, Content-Type (mode / 4) % 8
        return bytes([4 * media.index(content_type)])

    write("manifest", "oci_manifest", manifest_mode(media[1]) + json.dumps(oci_manifest).encode())
    write("manifest", "docker_manifest", manifest_mode(media[3]) + json.dumps(docker_manifest).encode())
    write("manifest", "oci_index", manifest_mode(media[2]) + json.dumps(index).encode())
    write("manifest", "docker_list", manifest_mode(media[4]) + json.dumps(dict(index, mediaType=media[4])).encode())
    write("manifest", "index_no_media_type", manifest_mode("") + json.dumps({"schemaVersion": 2, "manifests": index["manifests"]}).encode())
    write("manifest", "schema1", manifest_mode(media[5]) + b'{"schemaVersion":1,"name":"x","tag":"y","fsLayers":[]}')
    config = {"architecture": "amd64", "os": "linux",
              "config": {"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"], "Cmd": ["sh"],
                         "Entrypoint": None, "WorkingDir": "/", "User": "1000:1000", "StopSignal": "SIGTERM",
                         "Labels": {"org.opencontainers.image.title": "app"}},
              "rootfs": {"type": "layers", "diff_ids": [DIGEST]}}
    write("manifest", "image_config", b"\x01" + json.dumps(config).encode())
    write("manifest", "registry_error", b"\x02" + b'{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":{"Tag":"x"}}]}')
    write("manifest", "registry_error_denied", b"\x02" + b'{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}')
    image_index = {"version": 1, "images": [{"id": CONFIG_DIGEST, "repo_tags": ["docker.io/library/busybox:latest"],
                                             "repo_digests": ["docker.io/library/busybox@" + DIGEST], "size": 2153731,
                                             "layers": [DIGEST], "config": json.dumps(config), "pinned": False}]}
    write("manifest", "image_index_file", b"\x03" + json.dumps(image_index).encode())

    for name, ch in [("docker_hub", 'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/busybox:pull"'),
                     ("basic", 'Basic realm="Registry Realm"'),
                     ("loopback_http", 'Bearer realm="http://127.0.0.1:5001/token",service=local,scope="repository:a/b:pull,push"'),
                     ("other_host_http", 'Bearer realm="http://user@auth.example:8080/token?x=1",service="r"'),
                     ("unquoted_error", 'Bearer realm=https://ghcr.io/token, error="invalid_token"')]:
        write("www_authenticate", name, ch)


# ---- CNI ----
CONFLIST = {"cniVersion": "1.0.0", "name": "berth-pod", "plugins": [
    {"type": "bridge", "bridge": "berth0", "isGateway": True, "ipMasq": True,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.88.0.0/16"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": True}}, {"type": "loopback"}]}


def cni():
    r10 = {"cniVersion": "1.0.0", "interfaces": [{"name": "eth0", "mac": "aa:bb:cc:dd:ee:ff", "sandbox": "/run/berth/netns/x"}],
           "ips": [{"address": "10.88.0.5/16", "gateway": "10.88.0.1", "interface": 0},
                   {"address": "fd00::5/64", "interface": 0}],
           "routes": [{"dst": "0.0.0.0/0"}], "dns": {}}
    r04 = {"cniVersion": "0.4.0", "interfaces": [{"name": "eth0"}],
           "ips": [{"version": "4", "address": "10.88.0.6/16", "gateway": "10.88.0.1", "interface": 0}]}
    r031 = dict(r04, cniVersion="0.3.1")
    r02 = {"cniVersion": "0.2.0", "ip4": {"ip": "10.22.0.9/16", "gateway": "10.22.0.1"}, "ip6": {"ip": "2001:db8::9/64"}}
    for name, r in [("result_1.0.0", r10), ("result_0.4.0", r04), ("result_0.3.1", r031), ("result_0.2.0", r02)]:
        write("cni_result", name, b"\x00" + json.dumps(r).encode())
    write("cni_result", "error_1.0.0", b"\x01" + json.dumps(
        {"cniVersion": "1.0.0", "code": 7, "msg": "failed to allocate for range 0", "details": "no IP addresses available"}).encode() + b"\n")
    write("cni_result", "error_plain_text", b"\x01" + b"panic: runtime error\n")
    write("cni_result", "conflist", b"\x02" + json.dumps(CONFLIST, indent=2).encode())
    write("cni_result", "conf", b"\x07" + json.dumps({"cniVersion": "0.4.0", "name": "net", "type": "bridge",
                                                          "disableCheck": "true"}).encode())
    write("cni_result", "json_list", b"\x0c" + json.dumps(dict(CONFLIST, disableCheck=False)).encode())
    entry = {"containerId": "c1", "ifName": "eth0", "networkName": "berth-pod", "config": CONFLIST,
             "cniArgs": "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web",
             "capabilityArgs": {"portMappings": [{"hostPort": 8080, "containerPort": 80, "protocol": "tcp"}]},
             "netns": "/run/berth/netns/c1", "result": r10}
    compact = json.dumps(entry, sort_keys=True, separators=(",", ":"))
    cache_file = json.dumps({"entry": entry, "sha256": hashlib.sha256(compact.encode()).hexdigest(), "version": 1},
                            sort_keys=True, separators=(",", ":")) + "\n"
    write("cni_result", "cache_file", b"\x03" + cache_file.encode())
    write("cni_result", "cache_entry", b"\x04" + compact.encode())


# ---- berth.toml ----
def config():
    write("config", "packaged", open(os.path.join(ROOT, "packaging", "berth.toml"), "rb").read())
    write("config", "registries_runtimes", """log_level = "debug"
cgroup_driver = "systemd"
default_runtime = "crun"
cni_plugin_dirs = ["/opt/cni/bin"]
streaming_idle_timeout_seconds = 3600

[runtimes.crun]
path = "/usr/bin/crun"
root = "/run/berth/crun"

[registries."docker.io"]
mirrors = ["https://mirror.example", "http://127.0.0.1:5000"]

[registries."registry.local:5000"]
insecure = true
ca_file = "/etc/berth/certs/local.pem"
""")
    write("config", "bad_type", 'max_concurrent_rpcs = "many"\n')
    write("config", "syntax_error", '[runtimes.runc\npath = "runc"\n')


# ---- records ----
def checksummed(obj):
    obj = dict(obj)
    obj.pop("checksum", None)
    compact = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    obj["checksum"] = "sha256:" + hashlib.sha256(compact.encode()).hexdigest()
    return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def records():
    sandbox = "3f2a" + "0" * 60
    cp = {"version": 1, "id": sandbox, "phase": "ready",
          "metadata": {"name": "web", "namespace": "default", "uid": "6d1b4c2e-1111-2222-3333-444455556666", "attempt": 0},
          "netns_path": "/run/berth/netns/" + sandbox, "host_network": False, "privileged": False, "image_id": "",
          "namespace_modes": {"network": 0, "pid": 1, "ipc": 0}, "cgroup_parent": "/kubepods/besteffort/pod6d1b4c2e",
          "runtime_handler": "runc", "hostname": "web", "log_directory": "/var/log/pods/default_web_6d1b4c2e",
          "port_mappings": [{"protocol": "TCP", "container_port": 80, "host_port": 8080, "host_ip": ""}],
          "labels": {"app": "web", "io.kubernetes.pod.name": "web"}, "annotations": {"kubernetes.io/config.seen": "now"},
          "created_at": 1700000000123456789}
    rec = {"version": 1, "id": "9c1e" + "0" * 60, "sandbox_id": sandbox, "name": "nginx", "attempt": 1,
           "image_id": CONFIG_DIGEST, "image_ref": "docker.io/library/nginx@" + DIGEST, "stop_signal": "SIGQUIT",
           "runtime_handler": "runc", "log_path": "/var/log/pods/default_web_6d1b4c2e/nginx/1.log",
           "config": "CgcKBW5naW54", "state": 2, "created_at": 1700000000000000000, "started_at": 1700000001000000000,
           "finished_at": 1700000002000000000, "exit_code": 137, "reason": "OOMKilled", "message": "", "pid": 0,
           "user": {"uid": 0, "gid": 0, "additional_gids": [10, 11]}}
    write("records", "checkpoint", b"\x00" + checksummed(cp).encode())
    write("records", "container_record", b"\x01" + checksummed(rec).encode())
    write("records", "checkpoint_fixed_checksum", b"\x02" + json.dumps(dict(cp, phase="creating")).encode())
    write("records", "container_record_fixed_checksum", b"\x03" + json.dumps(dict(rec, state=0)).encode())
    write("records", "checkpoint_bad_checksum", b"\x00" + checksummed(cp).replace('"web"', '"bad"', 1).encode())


# ---- berth-monitor ----
MAGIC = 0x4E4D5442


def packet(ptype, payload=b"", version=1):
    return struct.pack("<IHHI", MAGIC, version, ptype, len(payload)) + payload


def monitor():
    pk = {"hello": packet(1), "hello_reply": packet(2, struct.pack("<HBBii", 1, 1, 1, 4242, 4243)),
          "exited": packet(4, struct.pack("<iiq", 137, 9, 1700000000123456789) + b"OOMKilled"),
          "reopen_done": packet(6), "attach": packet(7, bytes([1, 1, 1, 0])),
          "attach_fds": packet(8, bytes([1, 1, 0, 1])), "resize": packet(9, struct.pack("<HH", 24, 80)),
          "error": packet(10, b"reopen log: Permission denied"), "spawned": packet(11, struct.pack("<i", 4242)),
          "created": packet(12, struct.pack("<ii", 4243, 4242)),
          "create_failed": packet(13, struct.pack("<i", 2) + b"exec: runc: not found"),
          "other_version_error": packet(10, b"berth-monitor speaks protocol version 2, not 1", version=2)}
    for name, p in pk.items():
        write("monitor_protocol", "decode_" + name, b"\x00" + p)
        write("monitor_protocol", "receive_" + name, b"\x01" + p)
    # mode & 2: the harness writes the header (type = mode >> 3) and the input is the payload.
    write("monitor_protocol", "payload_exited", bytes([(4 << 3) | 3]) + struct.pack("<iiq", 0, 0, 1) + b"")
    write("monitor_protocol", "payload_resize", bytes([(9 << 3) | 2]) + struct.pack("<HH", 50, 132))

    write("exit_record", "exit_file", b"\x00" + b'{"version":1,"exit_code":137,"signal":9,"exited_at":1700000000123456789,"reason":"OOMKilled"}\n')
    write("exit_record", "exit_file_escapes", b"\x00" + b'{"version":1,"exit_code":-1,"signal":0,"exited_at":0,"reason":"runc create: \\"exec\\": \\u00e9\\n\\ttab"}\n')
    write("exit_record", "runtime_log", b"\x01" + b'{"level":"info","msg":"starting","time":"2024-01-01T00:00:00Z"}\n'
          b'{"level":"error","msg":"runc create failed: unable to start container process: exec: \\"foo\\": executable file not found in $PATH","time":"2024-01-01T00:00:01Z"}\n')
    write("exit_record", "escape", b"\x02" + 'quote " backslash \\ newline \n tab \t bell \x07 é'.encode())

    def log_input(choice, ns, chunks):  # fuzz_cri_log: line_max (< 16: 16384, else 1 + choice % 64), time, reads
        out = bytes([choice]) + struct.pack(">Q", ns)
        for c in chunks:
            out += bytes([len(c) - 1]) + c
        return out

    write("cri_log", "lines", log_input(0, 1700000000123456789, [b"hello\n", b"wor", b"ld\r\n", b"\n", b"no newline"]))
    write("cri_log", "long_line_cut", log_input(64 + 7, 1, [b"0123456789abcdef0123", b"456789\r", b"\nnext\r", b"x"]))
    write("cri_log", "cr_at_limit", log_input(64 + 3, 0, [b"abcd\r", b"\n", b"abcde\r\n", b"\r\r\n"]))


# ---- cgroup files (stats/) ----
def cgroup_files():
    """fuzz_cgroup_files: mode byte (% 3: 0 PSI, 1 io.stat, 2 blkio throttle file), then the file."""
    psi = "some avg10=9.05 avg60=1.63 avg300=0.34 total=1519443\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=20882\n"
    write("cgroup_files", "pressure", b"\x00" + psi.encode())
    write("cgroup_files", "pressure_no_full", b"\x00" + b"some avg10=1.52 avg60=0.48 avg300=0.11 total=31684119\n")
    write("cgroup_files", "io_stat", b"\x01" + b"8:16 rbytes=1459200 wbytes=314773504 rios=192 wios=353 dbytes=0 dios=0\n"
          b"8:0 rbytes=90430464 wbytes=299008000 rios=8950 wios=1252 dbytes=50331648 dios=3021\n")
    write("cgroup_files", "io_stat_empty", b"\x01")
    rw = "".join("254:0 %s %d\n" % (op, v) for op, v in
                 [("Read", 25178112), ("Write", 25165824), ("Sync", 50343936), ("Async", 0), ("Discard", 0), ("Total", 50343936)])
    write("cgroup_files", "blkio_bytes", b"\x02" + (rw + "Total 50343936\n").encode())
    write("cgroup_files", "blkio_idle", b"\x02" + b"Total 0\n")


# ---- berth-pull protocol (image/pull_worker_protocol.h) ----
def pull_worker():
    """fuzz_pull_worker: mode byte (% 3: 0 reply frames cut in pieces of mode / 3 + 1 bytes,
    1 a request, 2 a hello), then the bytes."""
    def frame(payload):
        return struct.pack("<I", len(payload)) + payload
    ok = json.dumps({"code": 0, "message": "", "registry_bytes": 528, "media_type":
                     "application/vnd.oci.image.manifest.v1+json"}).encode()
    failed = json.dumps({"code": 7, "message": "registry 127.0.0.1:5000: blob sha256:ab: 503",
                         "registry_bytes": 0, "media_type": ""}).encode()
    body = json.dumps({"schemaVersion": 2, "layers": []}).encode()
    write("pull_worker", "replies_whole", b"\x00" + frame(ok) + frame(body) + frame(failed))
    write("pull_worker", "replies_in_pieces", bytes([3 * 6]) + frame(ok) + frame(body) + frame(failed))
    write("pull_worker", "reply_oversized_frame", b"\x00" + struct.pack("<I", 64 << 20) + b"{}")
    for name, req in [("manifest", {"op": "manifest", "ref": "latest", "what": "manifest latest"}),
                      ("blob", {"op": "blob", "digest": "sha256:" + "ab" * 32, "size": 12, "what": "l"}),
                      ("prefetch", {"op": "prefetch", "digest": "sha256:" + "ab" * 32, "size": 300, "what": "c"}),
                      ("unpack", {"op": "unpack", "blob": "/var/lib/berth/images/blobs/sha256/ab", "dest": "/x.unpacking"})]:
        write("pull_worker", "request_" + name, b"\x01" + json.dumps(req).encode())
    hello = {"store": "/var/lib/berth/images", "reference": "registry.example/app:v1", "idle_timeout_seconds": 60,
             "hosts": {"registry.example": {"mirrors": ["http://127.0.0.1:5000"], "insecure": True, "ca_file": ""}},
             "credentials": {"username": "u", "password": "p", "identity_token": "", "registry_token": ""}}
    write("pull_worker", "hello", b"\x02" + json.dumps(hello).encode())


# ---- berth-exec request (container/program/exec_request.h) ----
def exec_request():
    """fuzz_exec_request: mode byte (% 2: 0 wire bytes to the helper's parser, 1 a process
    object to berthd's encoder), then the bytes."""
    def rec(tag, value):
        return tag.encode() + struct.pack("<I", len(value)) + value
    def s(v):
        return v.encode() + b"\0"
    def n(v):
        return struct.pack("<Q", v)
    wire = (b"BXR1" + rec("a", s("/bin/sh")) + rec("a", s("-c")) + rec("a", s("echo hi")) + rec("e", s("PATH=/bin")) +
            rec("c", s("/tmp")) + rec("u", n(1000)) + rec("g", n(2000)) + rec("G", n(3000)) + rec("B", n(0x5fb)) +
            rec("E", n(0x5fb)) + rec("P", n(0x5fb)) + rec("n", n(1)) + rec("r", n(7) + n(1024) + n(4096)) +
            rec("o", n(2**64 - 998)) + rec("s", b"\x06\0\0\0\0\0\xff\x7f") + rec("k", s("/sys/fs/cgroup/pids/x/cgroup.procs")))
    write("exec_request", "wire_full", b"\x00" + wire)
    write("exec_request", "wire_truncated", b"\x00" + wire[:-7])
    write("exec_request", "wire_bad_string", b"\x00" + b"BXR1" + rec("a", b"no-nul"))
    process = {"user": {"uid": 1000, "gid": 2000, "additionalGids": [3000], "umask": 18}, "args": ["sleep"],
               "env": ["PATH=/bin", "A=b"], "cwd": "/", "noNewPrivileges": True, "oomScoreAdj": -100,
               "capabilities": {"bounding": ["CAP_KILL"], "effective": ["CAP_KILL"], "permitted": ["CAP_KILL"]},
               "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}], "apparmorProfile": "p"}
    write("exec_request", "process_full", b"\x01" + json.dumps(process).encode())
    write("exec_request", "process_terminal", b"\x01" + json.dumps({"terminal": True}).encode())


def traceparent():
    # fuzz_traceparent: the metadata value as a caller sends it.
    write("traceparent", "sampled", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    write("traceparent", "not_sampled", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00")
    write("traceparent", "later_version", "cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-09-what-comes")
    write("traceparent", "zero_trace", "00-00000000000000000000000000000000-b7ad6b7169203331-01")
    write("traceparent", "upper_case", "00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01")
    write("traceparent", "bytes", b"\xff\x00-\x80 not utf-8")


def registry_auth():
    # fuzz_registry_auth: a mode byte (0 auth file, 1 helper answer, 2 JWT, 3 auths key), then the bytes.
    auth_file = json.dumps({
        "auths": {
            "https://index.docker.io/v1/": {"auth": "dXNlcjpwYXNzd29yZA=="},
            "registry.example:5000": {"username": "u", "password": "p"},
            "quay.io/org/repo": {"identitytoken": "refresh"},
            "helper.example": {},
        },
        "credHelpers": {"gcr.io": "gcloud", "https://ecr.example/": "ecr-login"},
        "credsStore": "secretservice",
    })
    write("registry_auth", "auth_file", b"\x00" + auth_file.encode())
    write("registry_auth", "bad_auth", b"\x00" + b'{"auths":{"h":{"auth":"bm8tY29sb24="}}}')
    write("registry_auth", "helper_answer", b"\x01" + b'{"ServerURL":"h","Username":"u","Secret":"s"}')
    write("registry_auth", "helper_token", b"\x01" + b'{"ServerURL":"h","Username":"<token>","Secret":"t"}')
    write("registry_auth", "jwt", b"\x02" + b"eyJhbGciOiJub25lIn0.eyJleHAiOjE5MDAwMDAwMDB9.")
    write("registry_auth", "key", b"\x03" + b"https://registry-1.docker.io/v2/library/")


def image_signature():
    # fuzz_image_signature: a mode byte (0 signature manifest, 1 payload, 2 PEM key, 3 payload+signature).
    digest = "sha256:" + "ab" * 32
    manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                           "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "size": 2,
                                      "digest": "sha256:" + "44" * 32},
                           "layers": [{"mediaType": "application/vnd.dev.cosign.simplesigning.v1+json",
                                       "size": 230, "digest": digest,
                                       "annotations": {"dev.cosignproject.cosign/signature": "MEUCIQ=="}}]})
    payload = json.dumps({"critical": {"identity": {"docker-reference": "registry.example/app"},
                                       "image": {"docker-manifest-digest": digest},
                                       "type": "cosign container image signature"}, "optional": None})
    write("image_signature", "manifest", b"\x00" + manifest.encode())
    write("image_signature", "payload", b"\x01" + payload.encode())
    write("image_signature", "ed25519_key", b"\x02-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n")
    write("image_signature", "p256_key", b"\x02-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEEVs/o5+uQbTjL3chynL4wXgUg2R9\nq9UU8I5mEovUf86QZ7kOBIjJwqnzD1omageEHWwHdBO6B+dFabmdT9POxg==\n-----END PUBLIC KEY-----\n")
    write("image_signature", "signed", b"\x03" + payload.encode() + b"0E\x02\x21\x00" + b"\x11" * 32 + b"\x02\x20" + b"\x22" * 32)


def layer_unpack():
    # fuzz_layer_unpack: a mode byte (0 the blob as it is, 1 gzipped in one member, 2 in two), then a tar.
    def tar(entries):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
            for name, kind, data, link in entries:
                info = tarfile.TarInfo(name)
                info.type = kind
                info.linkname = link
                info.size = len(data) if data else 0
                info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
                t.addfile(info, io.BytesIO(data) if data else None)
        return buf.getvalue()
    files = tar([("etc", tarfile.DIRTYPE, None, ""), ("etc/passwd", tarfile.REGTYPE, b"root:x:0:0::/:/bin/sh\n", ""),
                 ("bin", tarfile.DIRTYPE, None, ""), ("bin/sh", tarfile.SYMTYPE, None, "busybox"),
                 ("bin/busybox", tarfile.REGTYPE, b"\x7fELF" + b"\0" * 64, ""),
                 ("bin/ls", tarfile.LNKTYPE, None, "bin/busybox")])
    whiteouts = tar([("etc", tarfile.DIRTYPE, None, ""), ("etc/.wh.passwd", tarfile.REGTYPE, b"", ""),
                     ("var/.wh..wh..opq", tarfile.REGTYPE, b"", "")])
    escapes = tar([("x", tarfile.SYMTYPE, None, "../outside"), ("x/f", tarfile.REGTYPE, b"no", ""),
                   ("../outside/g", tarfile.REGTYPE, b"no", ""), ("h", tarfile.LNKTYPE, None, "../outside/g"),
                   ("abs", tarfile.SYMTYPE, None, "/outside"), ("abs/i", tarfile.REGTYPE, b"no", "")])
    for mode in (0, 1, 2):
        write("layer_unpack", f"files_{mode}", bytes([mode]) + files)
    write("layer_unpack", "whiteouts", b"\x01" + whiteouts)
    write("layer_unpack", "escapes", b"\x01" + escapes)
    write("layer_unpack", "escapes_streamed", b"\x02" + escapes)


def checkpoint_archive():
    # fuzz_checkpoint_archive: a mode byte (0 an archive, 1 deleted.files, 2 config.dump), then the bytes.
    def tar(entries):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
            for name, kind, data, link in entries:
                info = tarfile.TarInfo(name)
                info.type = kind
                info.linkname = link
                info.size = len(data) if data else 0
                t.addfile(info, io.BytesIO(data) if data else None)
        return buf.getvalue()
    good = tar([("checkpoint", tarfile.DIRTYPE, None, ""), ("checkpoint/inventory.img", tarfile.REGTYPE, b"\x01" * 64, ""),
                ("config.dump", tarfile.REGTYPE, b'{"id":"a","rootfsImageName":"busybox"}', ""),
                ("deleted.files", tarfile.REGTYPE, b'["/etc/motd"]', "")])
    hostile = tar([("../outside/x", tarfile.REGTYPE, b"no", ""), ("l", tarfile.SYMTYPE, None, "../outside"),
                   ("l/y", tarfile.REGTYPE, b"no", ""), ("h", tarfile.LNKTYPE, None, "config.dump"),
                   ("/abs", tarfile.REGTYPE, b"no", "")])
    write("checkpoint_archive", "archive", b"\x00" + good)
    write("checkpoint_archive", "hostile", b"\x00" + hostile)
    write("checkpoint_archive", "deleted_files", b'\x01["/etc/motd", "/a/./b", "/../x"]')
    write("checkpoint_archive", "config_dump", b'\x02{"id":"abc","name":"c","rootfsImage":"r/b:1","rootfsImageRef":"sha256:00",'
          b'"rootfsImageName":"r/b:1","runtime":"runc","createdTime":"2026-12-07T00:00:00Z","restored":false}')


# ---- NRI's wire (nri/: the multiplexer, ttrpc frames and envelopes) ----
def nri_wire():
    """fuzz_nri_wire: mode byte (bit 0: a ttrpc stream alone; else multiplexed; the rest: cut size - 1)."""
    def varint(n):
        out = b""
        while True:
            b, n = n & 0x7F, n >> 7
            out += bytes([b | (0x80 if n else 0)])
            if not n:
                return out

    def field(num, value):  # a length-delimited field
        return varint(num << 3 | 2) + varint(len(value)) + value

    def ttrpc_frame(stream, kind, data):
        return struct.pack(">IIBB", len(data), stream, kind, 0) + data

    def mux(conn, data):
        return struct.pack(">II", conn, len(data)) + data

    request = (field(1, b"nri.pkg.api.v1alpha1.Plugin") + field(2, b"Configure") + field(3, b"\x0a\x02{}") +
               varint(4 << 3) + varint(2000000000))
    ok = field(1, varint(1 << 3) + varint(0)) + field(2, b"\x10\xff\x7f")
    failed = field(1, varint(1 << 3) + varint(3) + field(2, b"invalid plugin events"))
    register = field(1, b"nri.pkg.api.v1alpha1.Runtime") + field(2, b"RegisterPlugin") + field(3, field(1, b"test") + field(2, b"10"))
    stream = mux(1, ttrpc_frame(1, 1, request)) + mux(2, ttrpc_frame(1, 1, register)) + mux(1, ttrpc_frame(1, 2, ok))
    write("nri_wire", "mux_whole", bytes([0xFE]) + stream)
    write("nri_wire", "mux_in_pieces", bytes([6 << 1]) + stream)
    write("nri_wire", "mux_reserved_conn", bytes([0xFE]) + mux(0, ttrpc_frame(1, 1, request)) + mux(3, b"x"))
    write("nri_wire", "mux_oversized", bytes([0xFE]) + struct.pack(">II", 1, (4 << 20) + 11))
    write("nri_wire", "ttrpc_frames", bytes([0xFF]) + ttrpc_frame(1, 1, request) + ttrpc_frame(3, 2, failed))
    write("nri_wire", "ttrpc_oversized", bytes([(100 << 1) | 1]) + struct.pack(">IIBB", (4 << 20) + 1, 5, 1, 0) + b"x" * 300)


def main():
    spdy()
    ws()
    http_upgrade()
    image()
    cni()
    config()
    records()
    monitor()
    cgroup_files()
    pull_worker()
    exec_request()
    traceparent()
    registry_auth()
    image_signature()
    layer_unpack()
    nri_wire()
    checkpoint_archive()


if __name__ == "__main__":
    sys.exit(main())
