#!/usr/bin/env python3
"""Writes berthd's text-order linker script from a running berthd.

Reads which pages of berthd's code are in its page tables (/proc/<pid>/pagemap) and, from the
GNU ld map of the same binary, the input sections of code on those pages. The script it prints
places exactly those sections, in their present order, in an output section of their own ahead
of .text, so that the code berthd runs lies together and the kernel's 64 KiB fault-around maps
little else. Run it through tests/bench/text-order.sh, which makes the page tables mean
"touched" (the binary on a file system without readahead, out of the page cache) and links
berthd with a page per input section (server/berthd-text-profile.ld), so that a touched page
names the section that ran and no neighbour. Libraries built without -ffunction-sections have one
.text per object: those go whole.

  text_order.py --map <berthd.map> --pid <berthd pid> [--exe berthd]
"""
import argparse
import os
import re
import struct
import sys

PAGE = 4096
# Section names every object of a library without -ffunction-sections has: these are only ever
# named with their file, or one hot object would pull in every object's.
GENERIC = {".text", ".text.unlikely", ".text.hot", ".text.startup", ".text.exit"}


def touched_pages(pid, exe):
    """Link-time page numbers of the executable's code that are present in the process."""
    maps = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and os.path.basename(parts[5]) == exe:
                start, end = (int(x, 16) for x in parts[0].split("-"))
                maps.append((start, end, parts[1], int(parts[2], 16)))
    if not maps:
        sys.exit(f"text_order: no mapping of {exe} in process {pid}")
    base = next(start for start, end, perm, offset in maps if offset == 0)  # the load address
    pages = set()
    with open(f"/proc/{pid}/pagemap", "rb") as pm:
        for start, end, perm, offset in maps:
            if "x" not in perm:
                continue
            pm.seek(start // PAGE * 8)
            data = pm.read((end - start) // PAGE * 8)
            for i in range((end - start) // PAGE):
                if struct.unpack_from("<Q", data, i * 8)[0] >> 63:  # present
                    pages.add((start - base) // PAGE + i)
    return pages


def text_sections(map_path):
    """(address, size, section, file) of each input section of code: in the output section
    .text.berth_profile (berthd-text-profile.ld's), .text.berth_order or .text."""
    with open(map_path) as f:
        lines = f.read().split("\n")
    try:
        i = next(k for k, line in enumerate(lines) if line.startswith("Linker script and memory map"))
    except StopIteration:
        sys.exit(f"text_order: {map_path} is not a GNU ld map")
    sections = []
    inside = False
    pending = None
    for line in lines[i:]:
        head = re.match(r"^(\.\S+)", line)
        if head:  # an output section starts
            inside = head.group(1) in (".text", ".text.berth_order", ".text.berth_profile")
            pending = None
            continue
        if not inside:
            continue
        one_line = re.match(r"^ (\.\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
        if one_line:
            sections.append((int(one_line.group(2), 16), int(one_line.group(3), 16), one_line.group(1), one_line.group(4)))
            pending = None
            continue
        name_only = re.match(r"^ (\.\S+)$", line)
        if name_only:
            pending = name_only.group(1)
            continue
        placed = re.match(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
        if placed and pending:
            sections.append((int(placed.group(1), 16), int(placed.group(2), 16), pending, placed.group(3)))
            pending = None
    if not sections:
        sys.exit(f"text_order: no .text input sections in {map_path}")
    return sorted(sections)


def pattern(section, file):
    if section not in GENERIC:
        return f"*({section})"
    member = re.match(r"^(.*)\((.*)\)$", file)  # archive(member)
    if member:
        return f"*{os.path.basename(member.group(1))}:{member.group(2)}({section})"
    return f"*{os.path.basename(file)}({section})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--map", required=True)
    ap.add_argument("--pid", required=True, type=int)
    ap.add_argument("--exe", default="berthd")
    a = ap.parse_args()
    pages = touched_pages(a.pid, a.exe)
    hot, hot_bytes, all_bytes = [], 0, 0
    seen = set()
    for address, size, section, file in text_sections(a.map):
        all_bytes += size
        if size == 0 or not any(p in pages for p in range(address // PAGE, (address + size - 1) // PAGE + 1)):
            continue
        hot_bytes += size
        p = pattern(section, file)
        if p not in seen:
            seen.add(p)
            hot.append(p)
    print("/* berthd's code in the order it should be laid out: the input sections a profiled berthd")
    print("   touched (tests/bench/text-order.sh, which generated this file; do not edit it by hand).")
    print(f"   {len(hot)} patterns, {hot_bytes} of {all_bytes} bytes of code. A section no longer")
    print("   named here is laid out after these, as if this file did not exist. */")
    print("SECTIONS")
    print("{")
    print("  .text.berth_order :")
    print("  {")
    for p in hot:
        print(f"    {p}")
    print("  }")
    print("}")
    print("INSERT BEFORE .text;")
    print(f"text_order: {len(hot)} patterns, {hot_bytes} of {all_bytes} bytes of code touched", file=sys.stderr)


if __name__ == "__main__":
    main()
