#!/usr/bin/python3
# Self-check of nri-test-plugin.py: plays a minimal NRI runtime over a socketpair (the plugin gets
# its end as NRI_PLUGIN_SOCKET, as a pre-registered plugin would) and asserts what comes back.
# Run: /usr/bin/python3 tests/nri/selftest.py   (prints "selftest: OK", exit 0 on success)
import importlib.util, json, os, queue, socket, struct, subprocess, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN = os.path.join(HERE, "nri-test-plugin.py")
spec = importlib.util.spec_from_file_location("nri_test_plugin", PLUGIN)
plugin_mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plugin_mod)
api, tt = plugin_mod.load_protos(os.path.join(HERE, "../../api/nri/api.proto"))
PSVC = "nri.pkg.api.v1alpha1.Plugin"


class FakeRuntime:
    def __init__(self, *args):
        self.sock, theirs = socket.socketpair()
        env = dict(os.environ, NRI_PLUGIN_SOCKET=str(theirs.fileno()),
                   NRI_PLUGIN_NAME="selftest", NRI_PLUGIN_IDX="10")
        self.proc = subprocess.Popen([PLUGIN, *args], env=env, pass_fds=[theirs.fileno()])
        theirs.close()
        self.next_sid, self.replies, self.requests = 1, {}, queue.Queue()
        self.eof = threading.Event()
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        # The plugin must send exactly one whole ttrpc frame per mux frame.
        buf = b""
        while True:
            chunk = self.sock.recv(65536)
            if not chunk:
                return self.eof.set()
            buf += chunk
            while len(buf) >= 8 and len(buf) >= 8 + struct.unpack(">I", buf[4:8])[0]:
                conn, n = struct.unpack(">II", buf[:8])
                frame, buf = buf[8:8 + n], buf[8 + n:]
                size, sid, ftype, flags = struct.unpack(">IIBB", frame[:10])
                assert size == n - 10 and flags == 0, (size, n, flags)
                if conn == 1 and ftype == 2:
                    resp = tt.Response.FromString(frame[10:])
                    self.replies.setdefault(sid, queue.Queue()).put(resp)
                elif conn == 2 and ftype == 1:
                    self.requests.put((sid, tt.Request.FromString(frame[10:])))
                else:
                    raise AssertionError("unexpected frame conn %d type %d" % (conn, ftype))

    @staticmethod
    def frame(sid, ftype, data):
        return struct.pack(">IIBB", len(data), sid, ftype, 0) + data

    def mux(self, conn, data):
        self.sock.sendall(struct.pack(">II", conn, len(data)) + data)

    def request_frame(self, method, msg, payload=None):
        sid, self.next_sid = self.next_sid, self.next_sid + 2
        self.replies.setdefault(sid, queue.Queue())
        env = tt.Request(service=PSVC, method=method, timeout_nano=5 * 10**9,
                         payload=msg.SerializeToString() if payload is None else payload)
        return sid, self.frame(sid, 1, env.SerializeToString())

    def wait(self, sid, timeout=5):
        try:
            return self.replies[sid].get(timeout=timeout)
        except queue.Empty:
            return None

    def call(self, method, msg, split=False, payload=None, timeout=5):
        sid, f = self.request_frame(method, msg, payload)
        if split:  # one ttrpc frame over three mux frames
            for part in (f[:3], f[3:17], f[17:]):
                self.mux(1, part)
        else:
            self.mux(1, f)
        return self.wait(sid, timeout)

    def expect_call(self, method):
        sid, req = self.requests.get(timeout=5)
        assert req.service == "nri.pkg.api.v1alpha1.Runtime" and req.method == method, req
        return sid, req

    def respond(self, sid, msg=None, code=0, message=""):
        resp = tt.Response(payload=msg.SerializeToString() if msg else b"")
        resp.status.code, resp.status.message = code, message
        self.mux(2, self.frame(sid, 2, resp.SerializeToString()))

    def register(self, code=0):
        sid, req = self.expect_call("RegisterPlugin")
        r = api.RegisterPluginRequest.FromString(req.payload)
        assert sid == 1 and (r.plugin_name, r.plugin_idx) == ("selftest", "10"), (sid, r)
        self.respond(sid, api.Empty(), code, "go away" if code else "")


def ok(resp, msg_type):
    assert resp is not None and resp.status.code == 0, resp
    return msg_type.FromString(resp.payload)


def main_scenario(tmp):
    log = os.path.join(tmp, "calls.log")
    cfg = {
        "events": ["RUN_POD_SANDBOX", "CREATE_CONTAINER", "POST_START_CONTAINER"],
        "log": log,
        "adjust": {"annotations": {"selftest": "yes"}, "env": [{"key": "A", "value": "1"}]},
        "adjust_only": "c1",
        "create_update": [{"container_id": "other",
                           "linux": {"resources": {"cpu": {"shares": {"value": 256}}}}}],
        "sync_update": [{"container_id": "old", "ignore_failure": True}],
        "hang": ["RunPodSandbox"],
        "fail": {"StopContainer": "stop refused"},
        "unimplemented": ["PostCreateContainer"],
        "after_start_update": [{"container_id": "",
                                "linux": {"resources": {"memory": {"limit": {"value": 1 << 27}}}}}],
        "after_start_evict": [{"container_id": "victim", "reason": "selftest"}],
        "validate": {"reject": True, "reason": "no"},
    }
    rt = FakeRuntime()
    rt.register()
    conf_req = api.ConfigureRequest(config=json.dumps(cfg), runtime_name="fake")
    conf = ok(rt.call("Configure", conf_req), api.ConfigureResponse)
    assert conf.events == (1 << 0) | (1 << 3) | (1 << 6), conf.events

    pod = api.PodSandbox(id="pod-1", name="p")
    s1 = ok(rt.call("Synchronize", api.SynchronizeRequest(pods=[pod], more=True), split=True),
            api.SynchronizeResponse)
    assert s1.more and not s1.update, s1
    s2 = ok(rt.call("Synchronize", api.SynchronizeRequest(containers=[api.Container(id="old")])),
            api.SynchronizeResponse)
    assert not s2.more and [u.container_id for u in s2.update] == ["old"], s2

    c1 = ok(rt.call("CreateContainer", api.CreateContainerRequest(
        pod=pod, container=api.Container(id="ctr-1", name="c1"))), api.CreateContainerResponse)
    assert c1.adjust.annotations["selftest"] == "yes", c1
    assert [(e.key, e.value) for e in c1.adjust.env] == [("A", "1")], c1
    assert c1.update[0].linux.resources.cpu.shares.value == 256, c1
    c2 = ok(rt.call("CreateContainer", api.CreateContainerRequest(
        pod=pod, container=api.Container(id="ctr-2", name="c2"))), api.CreateContainerResponse)
    assert c2.ByteSize() == 0, c2

    # A hanging handler does not block the others.
    hang_sid, f = rt.request_frame("RunPodSandbox", api.RunPodSandboxRequest(pod=pod))
    rt.mux(1, f)
    v = ok(rt.call("ValidateContainerAdjustment", api.ValidateContainerAdjustmentRequest()),
           api.ValidateContainerAdjustmentResponse)
    assert v.reject and v.reason == "no", v
    assert rt.wait(hang_sid, timeout=1) is None, "RunPodSandbox should hang"

    r = rt.call("StopContainer", api.StopContainerRequest(container=api.Container(id="ctr-1")))
    assert (r.status.code, r.status.message) == (2, "stop refused"), r

    # Two ttrpc frames in one mux frame: an unimplemented-by-config and an unknown method.
    sa, fa = rt.request_frame("PostCreateContainer", api.PostCreateContainerRequest())
    sb, fb = rt.request_frame("Bogus", api.Empty())
    rt.mux(1, fa + fb)
    assert rt.wait(sa).status.code == 12 and rt.wait(sb).status.code == 12

    r = rt.call("UpdateContainer", None, payload=b"\xff\xff\xff")  # garbage: an error, no crash
    assert r.status.code == 2, r

    ok(rt.call("PostStartContainer", api.PostStartContainerRequest(
        pod=pod, container=api.Container(id="ctr-1", name="c1"))), api.PostStartContainerResponse)
    sid, req = rt.expect_call("UpdateContainers")
    u = api.UpdateContainersRequest.FromString(req.payload)
    assert sid == 3 and u.update[0].container_id == "ctr-1", (sid, u)
    assert u.update[0].linux.resources.memory.limit.value == 1 << 27, u
    assert [(e.container_id, e.reason) for e in u.evict] == [("victim", "selftest")], u
    rt.respond(sid, api.UpdateContainersResponse(failed=[u.update[0]]))

    ok(rt.call("StateChange", api.StateChangeEvent(event=api.POST_START_CONTAINER,
                                                   container=api.Container(id="ctr-9"))), api.Empty)
    sid, req = rt.expect_call("UpdateContainers")
    assert api.UpdateContainersRequest.FromString(req.payload).update[0].container_id == "ctr-9"
    rt.respond(sid, code=2, message="refused")

    ok(rt.call("Shutdown", api.Empty()), api.Empty)
    for _ in range(50):  # the plugin logs its second UpdateContainers once it has our answer
        lines = [json.loads(l) for l in open(log)]
        if len([l for l in lines if l["method"] == "Runtime/UpdateContainers"]) == 2:
            break
        time.sleep(0.1)
    rt.sock.shutdown(socket.SHUT_RDWR)  # close() alone waits for our blocked reader
    assert rt.proc.wait(5) == 0, rt.proc.returncode

    methods = [l["method"] for l in lines]
    for m in ("registered", "Configure", "Synchronize", "CreateContainer", "RunPodSandbox",
              "StopContainer", "PostStartContainer", "StateChange", "Bogus", "UpdateContainer"):
        assert m in methods, (m, methods)
    assert methods.count("Synchronize") == 2, methods
    assert {"method": "synchronized", "pods": 1, "containers": 1} in lines, lines
    rt_calls = {l["request"]["update"][0]["container_id"]: l
                for l in lines if l["method"] == "Runtime/UpdateContainers"}  # in either order
    assert rt_calls["ctr-1"]["response"]["failed"][0]["container_id"] == "ctr-1", rt_calls
    assert rt_calls["ctr-9"]["error"] == {"code": 2, "message": "refused"}, rt_calls
    sc = [l for l in lines if l["method"] == "StateChange"][0]
    assert sc["request"]["event"] == "POST_START_CONTAINER", sc
    cc = [l for l in lines if l["method"] == "CreateContainer"][0]
    assert cc["request"]["container"] == {"id": "ctr-1", "name": "c1"}, cc


def exit_on_scenario(tmp):
    path = os.path.join(tmp, "exit.json")
    with open(path, "w") as f:
        json.dump({"exit_on": "Configure", "events": "all"}, f)
    rt = FakeRuntime("--config", path)
    rt.register()
    conf = ok(rt.call("Configure", api.ConfigureRequest(config="ignored, not JSON")),
              api.ConfigureResponse)
    assert conf.events == (1 << 13) - 1, conf.events
    assert rt.proc.wait(5) == 3 and rt.eof.wait(5), rt.proc.returncode


def rejected_scenario():
    rt = FakeRuntime()
    rt.register(code=9)
    assert rt.proc.wait(5) == 1, rt.proc.returncode


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        main_scenario(tmp)
        exit_on_scenario(tmp)
    rejected_scenario()
    print("selftest: OK")
