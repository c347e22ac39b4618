#!/usr/bin/env python3
# Writes api.proto from the NRI plugin API's wire schema (../shared/nri/nri-v0.12.2-wire.json):
# the schema is a list of facts (names, numbers, types), so the proto is derived from it rather
# than typed by hand, which keeps the two wire-identical (ctest nri_wire_check).
#   api/nri/gen-proto.py ../shared/nri/nri-v0.12.2-wire.json api/nri/api.proto
import json
import sys

HEADER = """// The NRI plugin API (package nri.pkg.api.v1alpha1) as containerd/nri v0.12.2 defines it on the
// wire: the services a plugin and the runtime serve to each other, their messages, field numbers
// and types. Written by gen-proto.py from the wire schema (../shared/nri, the facts of that
// release); the test nri_wire_check (../shared/tools/check-nri-wire) proves the two identical. The
// transport is ttrpc over a unix socket, not gRPC: what berth generates from this file is its
// messages.
syntax = "proto3";

package nri.pkg.api.v1alpha1;
"""


def main(schema_path, out_path):
    d = json.load(open(schema_path))
    msgs, enums = d["messages"], d["enums"]
    out = [HEADER]

    def type_of(f):
        return f["type_name"] if f["type"] in ("message", "enum") else f["type"]

    def emit_enum(name, values, indent):
        out.append(f"{indent}enum {name.split('.')[-1]} {{")
        for k, v in sorted(values.items(), key=lambda kv: kv[1]):
            out.append(f"{indent}  {k} = {v};")
        out.append(f"{indent}}}")

    def children(table, parent):
        return sorted(k for k in table if "." in k and k.rsplit(".", 1)[0] == parent)

    def emit_message(name, indent):
        out.append(f"{indent}message {name.split('.')[-1]} {{")
        for e in children(enums, name):
            emit_enum(e, enums[e], indent + "  ")
        for m in children(msgs, name):
            if not msgs[m].get("map_entry"):
                emit_message(m, indent + "  ")
        for f in msgs[name]["fields"]:
            entry = msgs.get(f.get("type_name", ""), {})
            if entry.get("map_entry"):  # protoc names the entry <Field>Entry, as the schema has it
                kv = {x["name"]: x for x in entry["fields"]}
                out.append(f"{indent}  map<{type_of(kv['key'])}, {type_of(kv['value'])}> {f['name']} = {f['number']};")
                continue
            label = "repeated " if f["label"] == "repeated" else ""
            out.append(f"{indent}  {label}{type_of(f)} {f['name']} = {f['number']};")
        out.append(f"{indent}}}")

    for service in ("Runtime", "Plugin", "HostFunctions"):
        out.append(f"service {service} {{")
        for r in d["services"][service]:
            out.append(f"  rpc {r['rpc']}({r['in']}) returns ({r['out']});")
        out.append("}\n")
    for e in sorted(k for k in enums if "." not in k):
        emit_enum(e, enums[e], "")
        out.append("")
    for m in sorted(k for k in msgs if "." not in k):
        emit_message(m, "")
        out.append("")
    open(out_path, "w").write("\n".join(out).rstrip() + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
