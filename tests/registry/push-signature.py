#!/usr/bin/env python3
"""Signs test images the way cosign stores signatures, with keys the test made (no network, no
cosign: openssl signs, the registry API stores).

  push-signature.py copy <registry base URL> <repo:tag> <to repo>
      pushes the image under another repository (same manifest, same digest); prints the digest
  push-signature.py sign <registry base URL> <repo> <manifest digest> <private key PEM>
                         [--identity REF] [--signs DIGEST] [--tamper]
      a simple-signing payload naming <registry host>/<repo> (or --identity) and the digest (or
      --signs), signed with the key (ECDSA P-256: DER over sha256 of the payload; Ed25519: over the
      payload), pushed as the layer of a manifest tagged sha256-<hex>.sig, the base64 signature in
      its dev.cosignproject.cosign/signature annotation; --tamper alters the payload after signing
"""
import argparse, base64, importlib.util, json, os, subprocess, sys, tempfile, urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("build_test_images", os.path.join(HERE, "build-test-images.py"))
images = importlib.util.module_from_spec(spec)
spec.loader.exec_module(images)

SIMPLE_SIGNING = "application/vnd.dev.cosign.simplesigning.v1+json"


def copy(reg, source, to):
    repo, tag = source.rsplit(":", 1)
    resp = reg.call("GET", f"/v2/{repo}/manifests/{tag}",
                    headers={"Accept": f"{images.OCI_MANIFEST}, {images.DOCKER_MANIFEST}"})
    body = resp.read()
    media = resp.headers["Content-Type"]
    manifest = json.loads(body)
    for d in [manifest["config"]] + manifest["layers"]:
        data = reg.call("GET", f"/v2/{repo}/blobs/{d['digest']}").read()
        reg.push_blob(to, data)
    print(reg.push_manifest(to, tag, body, media))


def sign(reg, repo, digest, key, identity, signs, tamper):
    host = urllib.parse.urlparse(reg.base).netloc
    payload = json.dumps({"critical": {"identity": {"docker-reference": identity or f"{host}/{repo}"},
                                       "image": {"docker-manifest-digest": signs or digest},
                                       "type": "cosign container image signature"},
                          "optional": None}).encode()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "payload")
        with open(path, "wb") as f:
            f.write(payload)
        kind = subprocess.run(["openssl", "pkey", "-in", key, "-noout", "-text"], capture_output=True, check=True).stdout
        if b"ED25519" in kind:
            cmd = ["openssl", "pkeyutl", "-sign", "-rawin", "-inkey", key, "-in", path]
        else:
            cmd = ["openssl", "dgst", "-sha256", "-sign", key, path]
        signature = subprocess.run(cmd, capture_output=True, check=True).stdout
    if tamper:
        payload = payload.replace(b"cosign container image signature", b"cosign container image signaturE")
    config = b"{}"
    manifest = {"schemaVersion": 2, "mediaType": images.OCI_MANIFEST,
                "config": {"mediaType": images.OCI_CONFIG, "size": len(config), "digest": reg.push_blob(repo, config)},
                "layers": [{"mediaType": SIMPLE_SIGNING, "size": len(payload), "digest": reg.push_blob(repo, payload),
                            "annotations": {"dev.cosignproject.cosign/signature": base64.b64encode(signature).decode()}}]}
    tag = digest.replace(":", "-") + ".sig"
    print(reg.push_manifest(repo, tag, json.dumps(manifest).encode(), images.OCI_MANIFEST))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("op", choices=["copy", "sign"])
    ap.add_argument("registry")
    ap.add_argument("args", nargs="+")
    ap.add_argument("--identity", default="")
    ap.add_argument("--signs", default="")
    ap.add_argument("--tamper", action="store_true")
    a = ap.parse_args()
    reg = images.Registry(a.registry)
    if a.op == "copy":
        copy(reg, *a.args)
    else:
        sign(reg, *a.args, a.identity, a.signs, a.tamper)


if __name__ == "__main__":
    sys.exit(main())
