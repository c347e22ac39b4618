#!/usr/bin/env python3
"""Pushes a checkpoint archive as a checkpoint image, the way buildah makes one for CRI-O and
containerd (`buildah from scratch; buildah add <ctr> archive.tar /; buildah config --annotation=
org.criu.checkpoint.container.name=<name>`): one uncompressed layer holding the archive's files,
the annotation on the manifest. Usage: push-checkpoint-image.py <registry url> <archive> <repo> <tag> <name>
Prints the manifest digest."""
import importlib.util, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("test_images", os.path.join(HERE, "build-test-images.py"))
images = importlib.util.module_from_spec(spec)
spec.loader.exec_module(images)


def main():
    registry, archive, repo, tag, name = sys.argv[1:6]
    with open(archive, "rb") as f:
        raw = f.read()
    reg = images.Registry(registry)
    out = images.push_image(reg, repo, [tag], [(raw, raw, images.LAYER_TAR)],
                            annotations={"org.criu.checkpoint.container.name": name})
    print(out["manifest"])


if __name__ == "__main__":
    main()
