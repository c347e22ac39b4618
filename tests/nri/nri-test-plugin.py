#!/usr/bin/python3
# nri-test-plugin: a scriptable NRI plugin (containerd/nri v0.12.2 wire) for berth's tests. It
# speaks NRI's connection multiplexer and ttrpc over one unix socket, registers with the runtime
# and answers the Plugin service as a JSON behaviour object says (keys below, options: --help).
# Written independently of berth's C++ NRI module, from the wire format alone, so that the two
# check each other; only the message schema (api/nri/api.proto) is shared, compiled here with
# protoc at start.
#
# Log lines: {"method": M, "request": {...}} per call received (proto field names), "registered",
# {"method": "Runtime/UpdateContainers", "request", "response" | "error": {code, message}},
# {"method": "synchronized", "pods": N, "containers": N} after the last Synchronize chunk,
# {"method": M, "error": ...} for what could not be served, {"method": "exit"} before exit_on.
#
# Behaviour keys (JSON object, from --config FILE or else ConfigureRequest.config; all optional):
#   events            list of Event names, or "all" (events 1..13)         default "all"
#   log               file to append one JSON line per call to
#   adjust            ContainerAdjustment returned by CreateContainer
#   adjust_only       container name: only its CreateContainer gets adjust/update/evict
#   create_update, update_update, stop_update, sync_update   ContainerUpdate lists
#   create_evict, update_evict                               ContainerEviction lists
#   hang              method names never answered
#   fail              {method: message}: answer status 2 (Unknown) with message
#   unimplemented     method names answered with status 12 (StateChange excepted)
#   after_start_update, after_start_evict   sent with Runtime/UpdateContainers after
#                     PostStartContainer (or StateChange POST_START_CONTAINER);
#                     container_id "" = the container that started
#   exit_on           method name: after answering it, close the socket and exit 3
#   validate          {"reject": bool, "reason": str} for ValidateContainerAdjustment
import argparse, json, os, shutil, socket, struct, subprocess, sys, tempfile, threading, time

PLUGIN_SVC, RUNTIME_SVC = "nri.pkg.api.v1alpha1.Plugin", "nri.pkg.api.v1alpha1.Runtime"
PLUGIN_CONN, RUNTIME_CONN = 1, 2  # mux conn ids: runtime calls us on 1, we call it on 2
REQUEST, RESPONSE = 1, 2  # ttrpc frame types
MAX_DATA = 4 << 20
OK, UNKNOWN, RESOURCE_EXHAUSTED, UNIMPLEMENTED = 0, 2, 8, 12

TTRPC_PROTO = """syntax = "proto3"; package ttrpc;
message KeyValue { string key = 1; string value = 2; }
message Request { string service = 1; string method = 2; bytes payload = 3;
                  int64 timeout_nano = 4; repeated KeyValue metadata = 5; }
message Status { int32 code = 1; string message = 2; }
message Response { Status status = 1; bytes payload = 2; }
"""


def load_protos(proto_path):
    """protoc api.proto and the ttrpc envelope into a temp dir, import both, remove the dir."""
    tmp = tempfile.mkdtemp(prefix="nri-test-plugin-")
    try:
        with open(os.path.join(tmp, "ttrpc.proto"), "w") as f:
            f.write(TTRPC_PROTO)
        src = os.path.abspath(proto_path)
        for d, name in ((os.path.dirname(src), os.path.basename(src)), (tmp, "ttrpc.proto")):
            subprocess.run(["protoc", "--python_out=" + tmp, "-I" + d, name], check=True)
        sys.path.insert(0, tmp)
        import api_pb2, ttrpc_pb2
        del sys.path[0]
        return api_pb2, ttrpc_pb2
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class RpcError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class Plugin:
    def __init__(self, sock, api, tt, config, name, idx):
        from google.protobuf import json_format
        self.sock, self.api, self.tt, self.jf = sock, api, tt, json_format
        self.config, self.fixed_config = config or {}, config is not None
        self.name, self.idx = name, idx
        self.send_lock, self.log_lock, self.call_lock = (threading.Lock() for _ in range(3))
        self.pending_log = []  # lines logged before the log path is known
        self.next_id, self.calls = 1, {}  # our calls on conn 2: stream id -> Event (.data = reply)
        self.sync_pods = self.sync_ctrs = self.exit_code = 0
        self.methods = api.DESCRIPTOR.services_by_name["Plugin"].methods_by_name

    # --- logging ---
    def log(self, entry):
        with self.log_lock:
            self.pending_log.append(json.dumps(entry))
            path = self.config.get("log") if isinstance(self.config, dict) else None
            if path:
                with open(path, "a") as f:
                    f.write("".join(line + "\n" for line in self.pending_log))
                    f.flush()
                self.pending_log = []

    def todict(self, msg):
        return self.jf.MessageToDict(msg, preserving_proto_field_name=True)

    # --- wire ---
    def send(self, conn, stream_id, ftype, data):
        frame = struct.pack(">IIBB", len(data), stream_id, ftype, 0) + data
        with self.send_lock:
            self.sock.sendall(struct.pack(">II", conn, len(frame)) + frame)

    def reader(self):
        """Demultiplex the socket until it closes; each conn's payload is a byte stream."""
        buf, streams = b"", {PLUGIN_CONN: b"", RUNTIME_CONN: b""}
        while True:
            chunk = self.sock.recv(65536)
            if not chunk:
                return
            buf += chunk
            while len(buf) >= 8:
                conn, n = struct.unpack(">II", buf[:8])
                if len(buf) < 8 + n:
                    break
                payload, buf = buf[8:8 + n], buf[8 + n:]
                if conn not in streams:
                    self.log({"method": "mux", "error": "data for unknown conn %d" % conn})
                    continue
                streams[conn] += payload
                while len(streams[conn]) >= 10:
                    size, sid, ftype, flags = struct.unpack(">IIBB", streams[conn][:10])
                    if len(streams[conn]) < 10 + size:
                        break
                    data, streams[conn] = streams[conn][10:10 + size], streams[conn][10 + size:]
                    self.frame(conn, sid, ftype, flags, data)

    def frame(self, conn, sid, ftype, flags, data):
        if conn == PLUGIN_CONN and ftype == REQUEST:
            if len(data) > MAX_DATA:
                self.log({"method": "ttrpc", "error": "request of %d bytes" % len(data)})
                return self.reply(sid, RESOURCE_EXHAUSTED, "message too large")
            threading.Thread(target=self.serve, args=(sid, data), daemon=True).start()
        elif conn == RUNTIME_CONN and ftype == RESPONSE:
            with self.call_lock:
                event = self.calls.pop(sid, None)
            if event:
                event.data = data
                event.set()
        else:
            self.log({"method": "ttrpc", "error": "unexpected frame conn %d type %d flags %d "
                      "stream %d" % (conn, ftype, flags, sid)})

    def reply(self, sid, code, message="", payload=b""):
        resp = self.tt.Response(payload=payload)
        resp.status.SetInParent()
        resp.status.code, resp.status.message = code, message
        try:
            self.send(PLUGIN_CONN, sid, RESPONSE, resp.SerializeToString())
        except OSError as e:  # the runtime went away; the reader ends the plugin
            self.log({"method": "reply", "error": str(e)})

    def call(self, method, req, resp_type, timeout=None):
        """Call the runtime's service on conn 2; returns the response or raises RpcError."""
        event = threading.Event()
        with self.call_lock:
            sid, self.next_id = self.next_id, self.next_id + 2
            self.calls[sid] = event
        env = self.tt.Request(service=RUNTIME_SVC, method=method, payload=req.SerializeToString())
        self.send(RUNTIME_CONN, sid, REQUEST, env.SerializeToString())
        if not event.wait(timeout):
            raise RpcError(4, "no reply to %s in %ss" % (method, timeout))
        resp = self.tt.Response.FromString(event.data)
        if resp.status.code != OK:
            raise RpcError(resp.status.code, resp.status.message)
        return resp_type.FromString(resp.payload)

    # --- serving conn 1 ---
    def serve(self, sid, data):
        method, after = self.answer(sid, data)
        if after:
            after()
        if isinstance(self.config, dict) and method == self.config.get("exit_on"):
            self.log({"method": "exit", "after": method})
            self.exit_code = 3  # before shutdown: the reader's EOF makes run() return it
            self.sock.shutdown(socket.SHUT_RDWR)
            self.sock.close()
            os._exit(3)

    def answer(self, sid, data):
        """Answer one request; returns (method, action to run after the reply or None)."""
        method = "?"
        try:
            env = self.tt.Request.FromString(data)
            method = env.method
            if env.service != PLUGIN_SVC or method not in self.methods:
                self.log({"method": method, "service": env.service, "error": "unknown method"})
                self.reply(sid, UNIMPLEMENTED, "method %s/%s" % (env.service, method))
                return method, None
            desc = self.methods[method]
            req = getattr(self.api, desc.input_type.name).FromString(env.payload)
            if method == "Configure" and not self.fixed_config:
                self.config = json.loads(req.config) if req.config.strip() else {}
            self.log({"method": method, "request": self.todict(req)})
            cfg = self.config
            if method in cfg.get("hang", []):
                while True:
                    time.sleep(3600)
            if method in cfg.get("fail", {}):
                self.reply(sid, UNKNOWN, cfg["fail"][method])
                return method, None
            if method in cfg.get("unimplemented", []) and method != "StateChange":
                self.reply(sid, UNIMPLEMENTED, "method " + method)
                return method, None
            resp, after = self.handle(method, req, getattr(self.api, desc.output_type.name)())
        except Exception as e:  # never crash on what the runtime sends
            self.log({"method": method, "error": "%s: %s" % (type(e).__name__, e)})
            self.reply(sid, UNKNOWN, "%s: %s" % (type(e).__name__, e))
            return method, None
        self.reply(sid, OK, payload=resp.SerializeToString())
        return method, after

    def parse_list(self, key, msg_type):
        return [self.jf.ParseDict(d, msg_type()) for d in self.config.get(key, [])]

    def handle(self, method, req, resp):
        """Fill resp for method; returns (resp, action to run after replying or None)."""
        api, cfg = self.api, self.config
        if method == "Configure":
            events = cfg.get("events", "all")
            names = [api.Event.Name(e) for e in range(1, 14)] if events == "all" else events
            resp.events = sum(1 << (api.Event.Value(n) - 1) for n in set(names))
        elif method == "Synchronize":
            self.sync_pods += len(req.pods)
            self.sync_ctrs += len(req.containers)
            if req.more:
                resp.more = True
            else:
                resp.update.extend(self.parse_list("sync_update", api.ContainerUpdate))
                self.log({"method": "synchronized", "pods": self.sync_pods,
                          "containers": self.sync_ctrs})
                self.sync_pods = self.sync_ctrs = 0
        elif method == "CreateContainer":
            if cfg.get("adjust_only") in (None, req.container.name):
                if "adjust" in cfg:
                    self.jf.ParseDict(cfg["adjust"], resp.adjust)
                resp.update.extend(self.parse_list("create_update", api.ContainerUpdate))
                resp.evict.extend(self.parse_list("create_evict", api.ContainerEviction))
        elif method == "UpdateContainer":
            resp.update.extend(self.parse_list("update_update", api.ContainerUpdate))
            resp.evict.extend(self.parse_list("update_evict", api.ContainerEviction))
        elif method == "StopContainer":
            resp.update.extend(self.parse_list("stop_update", api.ContainerUpdate))
        elif method == "ValidateContainerAdjustment":
            v = cfg.get("validate", {})
            resp.reject, resp.reason = bool(v.get("reject", False)), str(v.get("reason", ""))
        if method == "PostStartContainer" or (
                method == "StateChange" and req.event == api.POST_START_CONTAINER):
            return resp, lambda: self.after_start(req.container.id)
        return resp, None

    def after_start(self, ctr_id):
        api = self.api
        updates = self.parse_list("after_start_update", api.ContainerUpdate)
        evicts = self.parse_list("after_start_evict", api.ContainerEviction)
        if not updates and not evicts:
            return
        for u in updates + evicts:
            u.container_id = u.container_id or ctr_id
        req = api.UpdateContainersRequest(update=updates, evict=evicts)
        entry = {"method": "Runtime/UpdateContainers", "request": self.todict(req)}
        try:
            entry["response"] = self.todict(self.call("UpdateContainers", req,
                                                      api.UpdateContainersResponse, 60))
        except RpcError as e:
            entry["error"] = {"code": e.code, "message": str(e)}
        self.log(entry)

    def run(self):
        reader = threading.Thread(target=self.reader_then_fail_calls, daemon=True)
        reader.start()
        req = self.api.RegisterPluginRequest(plugin_name=self.name, plugin_idx=self.idx)
        try:
            self.call("RegisterPlugin", req, self.api.Empty)
        except RpcError as e:
            print("nri-test-plugin: RegisterPlugin failed: code %d: %s" % (e.code, e),
                  file=sys.stderr)
            self.log({"method": "Runtime/RegisterPlugin",
                      "error": {"code": e.code, "message": str(e)}})
            return 1
        self.log({"method": "registered"})
        reader.join()
        return self.exit_code

    def reader_then_fail_calls(self):
        try:
            self.reader()
        except OSError as e:
            self.log({"method": "mux", "error": str(e)})
        with self.call_lock:  # the socket is gone: no pending call gets a reply
            calls, self.calls = self.calls, {}
        for event in calls.values():
            event.data = self.tt.Response(status={"code": 14, "message": "connection closed"}
                                          ).SerializeToString()
            event.set()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="Scriptable NRI test plugin (see header comment).")
    ap.add_argument("--proto", default=os.path.join(here, "../../api/nri/api.proto"))
    ap.add_argument("--socket", default="/var/run/nri/nri.sock",
                    help="runtime socket, unless NRI_PLUGIN_SOCKET names an inherited fd")
    ap.add_argument("--name", default=os.environ.get("NRI_PLUGIN_NAME", "nri-test-plugin"))
    ap.add_argument("--idx", default=os.environ.get("NRI_PLUGIN_IDX", "50"))
    ap.add_argument("--config", help="behaviour JSON file (else ConfigureRequest.config)")
    args = ap.parse_args()
    config = None
    if args.config:
        with open(args.config) as f:
            config = json.load(f)
    api, tt = load_protos(args.proto)
    if os.environ.get("NRI_PLUGIN_SOCKET"):
        sock = socket.socket(fileno=int(os.environ["NRI_PLUGIN_SOCKET"]))
    else:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(args.socket)
    os._exit(Plugin(sock, api, tt, config, args.name, args.idx).run())


if __name__ == "__main__":
    main()
