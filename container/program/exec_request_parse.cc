// parse_exec_request: bounds-checked reading of berth-exec's request (see exec_request.h). Every
// record is checked against the buffer's end before it is read; strings must end with their NUL
// and hold no other; repeated records past their limit are refused rather than dropped.
#include "exec_request.h"

#include <string.h>

namespace berth::exec_wire {

namespace {

uint64_t le64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

const char* parse_exec_request(const char* buf, size_t len, ExecRequest* r) {
  memset(r, 0, sizeof *r);
  r->cwd = "/";
  if (len < sizeof kMagic || memcmp(buf, kMagic, sizeof kMagic) != 0) return "not a berth-exec request (bad magic)";
  size_t at = sizeof kMagic;
  while (at < len) {
    if (len - at < 5) return "truncated record header";
    const auto* p = reinterpret_cast<const unsigned char*>(buf + at);
    uint8_t tag = p[0];
    uint32_t n = static_cast<uint32_t>(p[1]) | static_cast<uint32_t>(p[2]) << 8 | static_cast<uint32_t>(p[3]) << 16 |
                 static_cast<uint32_t>(p[4]) << 24;
    at += 5;
    if (n > len - at) return "record longer than the request";
    const char* v = buf + at;
    const auto* u = reinterpret_cast<const unsigned char*>(v);
    at += n;
    bool is_string = tag == kArg || tag == kEnv || tag == kCwd || tag == kAppArmor || tag == kCgroupProcs;
    if (is_string && (n == 0 || v[n - 1] != '\0' || memchr(v, '\0', n - 1) != nullptr))
      return "string record without its single NUL";
    bool is_number = tag == kUid || tag == kGid || tag == kGroup || tag == kUmask || tag == kCapBounding ||
                     tag == kCapEffective || tag == kCapPermitted || tag == kCapInheritable || tag == kCapAmbient ||
                     tag == kNoNewPrivs || tag == kOomScoreAdj || tag == kSeccompFlags;
    if (is_number && n != 8) return "number record not 8 bytes";
    switch (tag) {
      case kArg:
        if (r->argc == kMaxArgs) return "too many arguments";
        r->argv[r->argc++] = v;
        break;
      case kEnv:
        if (r->envc == kMaxEnv) return "too many environment variables";
        r->envp[r->envc++] = v;
        break;
      case kCwd: r->cwd = v; break;
      case kUid: r->uid = static_cast<uint32_t>(le64(u)); break;
      case kGid: r->gid = static_cast<uint32_t>(le64(u)); break;
      case kGroup:
        if (r->ngroups == kMaxGroups) return "too many groups";
        r->groups[r->ngroups++] = static_cast<uint32_t>(le64(u));
        break;
      case kUmask:
        r->has_umask = true;
        r->umask = static_cast<uint32_t>(le64(u)) & 0777;
        break;
      case kCapBounding: r->cap_bounding = le64(u); break;
      case kCapEffective: r->cap_effective = le64(u); break;
      case kCapPermitted: r->cap_permitted = le64(u); break;
      case kCapInheritable: r->cap_inheritable = le64(u); break;
      case kCapAmbient: r->cap_ambient = le64(u); break;
      case kNoNewPrivs: r->no_new_privs = le64(u) != 0; break;
      case kRlimit:
        if (n != 24) return "rlimit record not 24 bytes";
        if (r->nrlimits == kMaxRlimits) return "too many rlimits";
        r->rlimits[r->nrlimits++] = {static_cast<uint32_t>(le64(u)), le64(u + 8), le64(u + 16)};
        break;
      case kOomScoreAdj:
        r->has_oom_score_adj = true;
        r->oom_score_adj = static_cast<int64_t>(le64(u));
        break;
      case kAppArmor: r->apparmor = v; break;
      case kSeccompBpf:
        if (n == 0 || n % 8 != 0) return "seccomp program not whole instructions";
        r->seccomp_bpf = v;
        r->seccomp_len = n;
        break;
      case kSeccompFlags: r->seccomp_flags = le64(u); break;
      case kCgroupProcs:
        if (r->ncgroups == kMaxCgroups) return "too many cgroups";
        r->cgroup_procs[r->ncgroups++] = v;
        break;
      default: return "unknown record";
    }
  }
  if (r->argc == 0) return "no command";
  r->argv[r->argc] = nullptr;
  r->envp[r->envc] = nullptr;
  return nullptr;
}

}  // namespace berth::exec_wire
