#!/usr/bin/env python3
"""Builds berth's test images from Debian's busybox-static and pushes them to a registry.

Usage: build-test-images.py <registry base URL> [--user U --password P] [--big MiB]
                            [--pause-binary FILE] [--probe-binary FILE]
                            [--only debian --debian-mib M --debian-layers N]
Prints a JSON object with the digests the tests check against. Every image is made here from
/bin/busybox: no image comes from the internet.
"""
import argparse, base64, gzip, hashlib, io, json, os, subprocess, sys, tarfile, time, urllib.request, urllib.error

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
LAYER_TAR = "application/vnd.oci.image.layer.v1.tar"
LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"
LAYER_ZSTD = "application/vnd.oci.image.layer.v1.tar+zstd"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json"
DOCKER_LAYER = "application/vnd.docker.image.rootfs.diff.tar.gzip"


def sha(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Registry:
    def __init__(self, base, user=None, password=None):
        self.base = base.rstrip("/")
        self.auth = None
        if user is not None:
            self.auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    def call(self, method, url, data=None, headers=None):
        req = urllib.request.Request(url if url.startswith("http") else self.base + url, data=data, method=method)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        if self.auth:
            req.add_header("Authorization", self.auth)
        return urllib.request.urlopen(req, timeout=60)

    def push_blob(self, repo, data):
        digest = sha(data)
        try:
            self.call("HEAD", f"/v2/{repo}/blobs/{digest}")
            return digest
        except urllib.error.HTTPError:
            pass
        resp = self.call("POST", f"/v2/{repo}/blobs/uploads/", data=b"")
        loc = resp.headers["Location"]
        if not loc.startswith("http"):
            loc = self.base + loc
        sep = "&" if "?" in loc else "?"
        self.call("PUT", f"{loc}{sep}digest={digest}", data=data, headers={"Content-Type": "application/octet-stream"})
        return digest

    def push_manifest(self, repo, ref, body, media_type):
        self.call("PUT", f"/v2/{repo}/manifests/{ref}", data=body, headers={"Content-Type": media_type})
        return sha(body)


def tar_bytes(entries):
    """entries: list of (TarInfo, bytes or None)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for info, data in entries:
            t.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def entry(name, kind=tarfile.REGTYPE, data=None, mode=0o644, uid=0, gid=0, link="", major=0, minor=0, xattrs=None):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.uid, info.gid = uid, gid
    info.mtime = 1700000000
    info.linkname = link
    info.devmajor, info.devminor = major, minor
    if data is not None:
        info.size = len(data)
    if xattrs:
        info.pax_headers = {"SCHILY.xattr." + k: v for k, v in xattrs.items()}
    return info, data


def base_layer():
    busybox = open("/bin/busybox", "rb").read()
    files = [entry("bin", tarfile.DIRTYPE, mode=0o755), entry("etc", tarfile.DIRTYPE, mode=0o755),
             entry("tmp", tarfile.DIRTYPE, mode=0o1777), entry("bin/busybox", data=busybox, mode=0o755)]
    for tool in ["sh", "echo", "cat", "ls", "sleep", "id", "true", "false", "env", "stat", "dd", "wc", "head", "nc", "touch",
                 "yes", "stty", "grep", "tail", "kill", "mkdir", "printf", "seq", "tr", "mount", "cut", "hostname", "rm",
                 "pwd", "readlink", "ps", "sed", "tty", "od", "test", "uname"]:
        files.append(entry("bin/" + tool, tarfile.SYMTYPE, link="busybox", mode=0o777))
    files.append(entry("etc/passwd", data=b"root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000:app:/home/app:/bin/sh\n"))
    files.append(entry("etc/group", data=b"root:x:0:\napp:x:1000:\nvideo:x:44:app\n"))
    return tar_bytes(files)


def gz(data):
    return gzip.compress(data, mtime=0)


def zstd(data):
    return subprocess.run(["zstd", "-q", "-c"], input=data, stdout=subprocess.PIPE, check=True).stdout


def config(diff_ids, user="", cmd=None, arch="amd64", env=None, entrypoint=None, labels=None):
    c = {"Env": env or ["PATH=/bin"], "Cmd": cmd or ["/bin/sh"], "User": user, "WorkingDir": "/",
         "Labels": labels or {"org.berth.test": "yes"}}
    if entrypoint:
        c["Entrypoint"] = entrypoint
    return json.dumps({
        "architecture": arch, "os": "linux",
        "config": c,
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
    }, sort_keys=True).encode()


def push_image(reg, repo, tags, layers, user="", arch="amd64", docker=False, cmd=None, env=None, entrypoint=None,
               labels=None, annotations=None):
    """layers: list of (uncompressed tar, compressed bytes, media type). Also used by
    packaging/node-image/build-node-image (env, entrypoint, labels)."""
    descs = []
    for raw, blob, mt in layers:
        d = reg.push_blob(repo, blob)
        descs.append({"mediaType": DOCKER_LAYER if docker else mt, "digest": d, "size": len(blob)})
    cfg = config([sha(raw) for raw, _, _ in layers], user=user, arch=arch, cmd=cmd, env=env, entrypoint=entrypoint,
                 labels=labels)
    cfg_digest = reg.push_blob(repo, cfg)
    manifest = {"schemaVersion": 2, "mediaType": DOCKER_MANIFEST if docker else OCI_MANIFEST,
                "config": {"mediaType": DOCKER_CONFIG if docker else OCI_CONFIG, "digest": cfg_digest, "size": len(cfg)},
                "layers": descs}
    if annotations:
        manifest["annotations"] = annotations
    body = json.dumps(manifest).encode()
    mt = DOCKER_MANIFEST if docker else OCI_MANIFEST
    digest = None
    for t in tags:
        digest = reg.push_manifest(repo, t, body, mt)
    if not tags:
        digest = reg.push_manifest(repo, sha(body), body, mt)
    return {"manifest": digest, "config": cfg_digest, "layers": [d["digest"] for d in descs], "size": len(body)}


def package_layer(package):
    """The files of an installed Debian package as a gzipped layer: (package, (tar, gz, type))."""
    listed = subprocess.run(["dpkg", "-L", package], stdout=subprocess.PIPE, text=True, check=True).stdout.split("\n")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for path in listed:
            if not path.startswith("/") or path == "/." or not os.path.lexists(path):
                continue
            try:
                t.add(path, arcname=path.lstrip("/"), recursive=False)
            except OSError:
                pass  # unreadable: left out
    raw = buf.getvalue()
    return package, (raw, gz(raw), LAYER_GZIP)


def debian_package_layers(min_bytes, min_layers):
    """A layer per installed Debian package, the largest packages first, until the layers hold
    min_bytes compressed and there are min_layers of them: an image as big and as varied as real
    ones (binaries, libraries, text), from this machine's own packages. Packages much larger than
    a layer's share (about 3:1 compression assumed) are passed over. Returns (layers, names)."""
    from concurrent.futures import ProcessPoolExecutor
    sizes = subprocess.run(["dpkg-query", "-W", "-f", "${Installed-Size}\t${Package}\n"], stdout=subprocess.PIPE,
                           text=True, check=True).stdout.split("\n")
    cap_kib = 3 * 3 * min_bytes // min_layers // 1024
    packages = [p for k, p in sorted(((int(s), p) for s, p in (l.split("\t") for l in sizes if l)), reverse=True)
                if k <= cap_kib]
    layers, names, total = [], [], 0
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for i in range(0, len(packages), os.cpu_count() or 1):
            for package, layer in pool.map(package_layer, packages[i:i + (os.cpu_count() or 1)]):
                if len(layer[1]) < 1 << 20:
                    continue
                names.append(package)
                layers.append(layer)
                total += len(layer[1])
            if total >= min_bytes and len(layers) >= min_layers:
                return layers, names
    raise SystemExit(f"the installed packages make only {total >> 20} MiB in {len(layers)} layers")


def push_index(reg, repo, tag, entries):
    index = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [
        {"mediaType": OCI_MANIFEST, "digest": e["manifest"], "size": e["size"], "platform": p} for e, p in entries]}
    body = json.dumps(index).encode()
    return reg.push_manifest(repo, tag, body, OCI_INDEX)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("registry")
    ap.add_argument("--user")
    ap.add_argument("--password")
    ap.add_argument("--only", default="all", help="all, busybox, hostile, big or debian")
    ap.add_argument("--debian-mib", type=int, default=300, help="compressed MiB of test/debian:v1 at least")
    ap.add_argument("--debian-layers", type=int, default=8, help="layers of test/debian:v1 at least")
    ap.add_argument("--big", type=int, default=100, help="MiB of the big image")
    ap.add_argument("--pause-binary", help="also push test/pause:v1 holding this binary as /pause")
    ap.add_argument("--probe-binary", help="also push test/probe:v1, busybox plus this binary as /bin/syscall-probe and a setuid-root copy")
    a = ap.parse_args()
    reg = Registry(a.registry, a.user, a.password)
    out = {}
    base = base_layer()
    base_layer_blob = (base, gz(base), LAYER_GZIP)

    if a.only in ("all", "busybox"):
        out["busybox"] = push_image(reg, "test/busybox", ["latest", "other"], [base_layer_blob], docker=True)
    if a.only in ("all", "hostile"):
        # Images whose /etc/passwd is a FIFO (reading it would block) or a symlink out of the image
        # onto the host's files: berth must neither hang nor read the host's.
        fifo = tar_bytes([entry("etc", tarfile.DIRTYPE, mode=0o755), entry("etc/passwd", tarfile.FIFOTYPE)])
        links = tar_bytes([entry("etc", tarfile.DIRTYPE, mode=0o755),
                           entry("etc/passwd", tarfile.SYMTYPE, link="../../../../../../etc/passwd", mode=0o777),
                           entry("etc/group", tarfile.SYMTYPE, link="/proc/self/root/etc/group", mode=0o777)])
        out["hostile-fifo"] = push_image(reg, "test/hostile-etc", ["fifo"], [base_layer_blob, (fifo, gz(fifo), LAYER_GZIP)])
        out["hostile-links"] = push_image(reg, "test/hostile-etc", ["links"], [base_layer_blob, (links, gz(links), LAYER_GZIP)])
    if a.only == "all":
        # Layer 2 adds files, a hardlink, a symlink, a device node, an owned file with an xattr;
        # layer 3 whites out one file and makes /opq opaque; layer 4 (zstd) adds one more file.
        l2 = tar_bytes([entry("data", tarfile.DIRTYPE, mode=0o755), entry("data/a", data=b"file a\n"),
                        entry("data/b", data=b"file b\n", uid=1000, gid=1000, mode=0o600, xattrs={"user.berth": "test"}),
                        entry("data/b-link", tarfile.LNKTYPE, link="data/b"),
                        entry("data/sym", tarfile.SYMTYPE, link="/data/a"),
                        entry("data/null", tarfile.CHRTYPE, major=1, minor=3, mode=0o666),
                        entry("opq", tarfile.DIRTYPE, mode=0o755), entry("opq/old", data=b"old\n")])
        l3 = tar_bytes([entry("data", tarfile.DIRTYPE, mode=0o755), entry("data/.wh.a"),
                        entry("opq", tarfile.DIRTYPE, mode=0o755), entry("opq/.wh..wh..opq"),
                        entry("opq/new", data=b"new\n")])
        l4 = tar_bytes([entry("zstd-file", data=b"from a zstd layer\n")])
        out["layered"] = push_image(reg, "test/layered", ["v1"],
                                    [base_layer_blob, (l2, gz(l2), LAYER_GZIP), (l3, l3, LAYER_TAR), (l4, zstd(l4), LAYER_ZSTD)],
                                    user="app")
        other = tar_bytes([entry("arch", data=b"arm64\n")])
        arm = push_image(reg, "test/multi", [], [(other, gz(other), LAYER_GZIP)], arch="arm64")
        s390 = push_image(reg, "test/multi", [], [(other, gz(other), LAYER_GZIP)], arch="s390x")
        amd = push_image(reg, "test/multi", [], [base_layer_blob], user="1000")
        out["multi"] = {"index": push_index(reg, "test/multi", "v1", [
            (arm, {"os": "linux", "architecture": "arm64", "variant": "v8"}),
            (amd, {"os": "linux", "architecture": "amd64"}),
            (s390, {"os": "linux", "architecture": "s390x"})]), "amd64": amd}
        arm2 = push_image(reg, "test/armonly", [], [(other, gz(other), LAYER_GZIP)], arch="arm64")
        s390_2 = push_image(reg, "test/armonly", [], [(other, gz(other), LAYER_GZIP)], arch="s390x")
        dl = push_image(reg, "test/dlist", [], [base_layer_blob], docker=True)
        dlist = {"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.list.v2+json",
                 "manifests": [{"mediaType": DOCKER_MANIFEST, "digest": dl["manifest"], "size": dl["size"],
                                "platform": {"os": "linux", "architecture": "amd64"}}]}
        out["dlist"] = {"list": reg.push_manifest("test/dlist", "v1", json.dumps(dlist).encode(),
                                                  "application/vnd.docker.distribution.manifest.list.v2+json"),
                        "amd64": dl}
        out["armonly"] = {"index": push_index(reg, "test/armonly", "v1", [
            (arm2, {"os": "linux", "architecture": "arm64", "variant": "v8"}),
            (s390_2, {"os": "linux", "architecture": "s390x"})])}
        esc = tar_bytes([entry("../../escaped-by-berth-test", data=b"x\n")])
        out["escape"] = push_image(reg, "test/escape", ["v1"], [(esc, gz(esc), LAYER_GZIP)])
        hl = tar_bytes([entry("evil", tarfile.LNKTYPE, link="../../../etc/passwd")])
        out["hardlink_escape"] = push_image(reg, "test/hlescape", ["v1"], [(hl, gz(hl), LAYER_GZIP)])
        # Whiteouts through a symlink planted by the same layer, pointing out of the layer root.
        wh = tar_bytes([entry("out", tarfile.SYMTYPE, link="/tmp/berth-whiteout-escape-test"),
                        entry("out/.wh.victim")])
        out["whiteout_escape"] = push_image(reg, "test/whescape", ["v1"], [(wh, gz(wh), LAYER_GZIP)])
        opq = tar_bytes([entry("out", tarfile.SYMTYPE, link="/tmp/berth-whiteout-escape-test"),
                         entry("out/.wh..wh..opq")])
        out["opaque_escape"] = push_image(reg, "test/opqescape", ["v1"], [(opq, gz(opq), LAYER_GZIP)])
        # The last layer's stored bytes get corrupted; the base layer and an intact one come first, so
        # a failed pull has manifest, config, blobs and snapshots of its own to take back.
        intact = tar_bytes([entry("intact", data=b"this layer arrives intact\n")])
        bad = tar_bytes([entry("corrupt-me", data=b"this layer's stored bytes get corrupted\n" * 100)])
        out["corrupt"] = push_image(reg, "test/corrupt", ["v1"],
                                    [base_layer_blob, (intact, gz(intact), LAYER_GZIP), (bad, gz(bad), LAYER_GZIP)])
    if a.pause_binary:
        pause = tar_bytes([entry("pause", data=open(a.pause_binary, "rb").read(), mode=0o755),
                           entry("proc", tarfile.DIRTYPE, mode=0o755), entry("dev", tarfile.DIRTYPE, mode=0o755),
                           entry("sys", tarfile.DIRTYPE, mode=0o755)])
        out["pause"] = push_image(reg, "test/pause", ["v1"], [(pause, gz(pause), LAYER_GZIP)], cmd=["/pause"])
    if a.probe_binary:
        # Also as a setuid-root copy, for the user namespace tests (what set-user-ID from an image gains).
        binary = open(a.probe_binary, "rb").read()
        probe = tar_bytes([entry("bin", tarfile.DIRTYPE, mode=0o755),
                           entry("bin/syscall-probe", data=binary, mode=0o755),
                           entry("bin/syscall-probe-setuid", data=binary, mode=0o4755)])
        out["probe"] = push_image(reg, "test/probe", ["v1"], [base_layer_blob, (probe, gz(probe), LAYER_GZIP)])
    if a.only == "big":
        layers = []
        per = max(1, a.big // 4)
        for i in range(4):
            data = os.urandom(per << 20)
            raw = tar_bytes([entry(f"big-{i}", data=data)])
            layers.append((raw, gz(raw), LAYER_GZIP))
        out["big"] = push_image(reg, "test/big", ["v1"], [base_layer_blob] + layers)
    if a.only == "debian":
        layers, names = debian_package_layers(a.debian_mib << 20, a.debian_layers)
        out["debian"] = push_image(reg, "test/debian", ["v1"], [base_layer_blob] + layers)
        out["debian"]["packages"] = names
        out["debian"]["layer_sizes"] = [len(base_layer_blob[1])] + [len(blob) for _, blob, _ in layers]
        out["debian"]["compressed_bytes"] = sum(len(blob) for _, blob, _ in layers) + len(base_layer_blob[1])
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
