// Fuzz target: berth-exec's request (container/program/exec_request.h). Mode 0: raw bytes to the
// helper's parser, which must refuse or give a request whose every string lies in the buffer and
// ends there with its NUL. Mode 1: a config.json "process" object (as a damaged bundle could hold)
// through the typed spec's reader (berth/oci_spec.h: an error or a spec that writes and reads back
// unchanged) and berthd's encoder, whose output the parser must take back with the same command.
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "../../container/exec_helper.h"
#include "../../container/program/exec_request.h"
#include "fuzz_support.h"

using namespace berth;

namespace {

bool inside(const char* p, const std::string& buf) {
  return p >= buf.data() && p < buf.data() + buf.size() && std::memchr(p, '\0', buf.data() + buf.size() - p) != nullptr;
}

void parse(const std::string& buf) {
  static exec_wire::ExecRequest r;
  if (exec_wire::parse_exec_request(buf.data(), buf.size(), &r) != nullptr) return;
  FUZZ_CHECK(r.argc > 0 && r.argv[r.argc] == nullptr && r.envp[r.envc] == nullptr);
  for (int i = 0; i < r.argc; ++i) FUZZ_CHECK(inside(r.argv[i], buf));
  for (int i = 0; i < r.envc; ++i) FUZZ_CHECK(inside(r.envp[i], buf));
  for (int i = 0; i < r.ncgroups; ++i) FUZZ_CHECK(inside(r.cgroup_procs[i], buf));
  FUZZ_CHECK(r.seccomp_len % 8 == 0);
  if (r.seccomp_bpf) FUZZ_CHECK(static_cast<const char*>(r.seccomp_bpf) + r.seccomp_len <= buf.data() + buf.size());
}

void encode(const std::string& text) {
  auto process = nlohmann::json::parse(text, nullptr, false);
  if (process.is_discarded()) return;
  auto spec = oci::spec_from_json({{"process", process}});
  if (!spec.ok()) {
    FUZZ_CHECK(spec.status().code() == Code::invalid_argument);
    return;
  }
  const nlohmann::json written = oci::to_json(*spec);
  auto back = oci::spec_from_json(written);
  FUZZ_CHECK(back.ok() && oci::to_json(*back) == written);
  static SeccompProgramCache programs;
  auto req = exec_helper_request(*spec, {"/bin/true", "arg"}, {"/sys/fs/cgroup/x/cgroup.procs"}, programs);
  if (!req.ok()) return;
  static exec_wire::ExecRequest r;
  const char* why = exec_wire::parse_exec_request(req->data(), req->size(), &r);
  // A NUL inside an env string is the only thing the encoder passes that the parser refuses.
  if (why) {
    FUZZ_CHECK(std::strcmp(why, "string record without its single NUL") == 0);
    return;
  }
  FUZZ_CHECK(r.argc == 2 && std::strcmp(r.argv[0], "/bin/true") == 0 && std::strcmp(r.argv[1], "arg") == 0);
  FUZZ_CHECK(r.ncgroups == 1);
}

}  // namespace

BERTH_FUZZ_TARGET(exec_request) {
  fuzz::Reader in(data, size);
  uint8_t mode = in.byte();
  std::string rest(in.rest());
  if (mode % 2 == 0)
    parse(rest);
  else
    encode(rest);
  return 0;
}
