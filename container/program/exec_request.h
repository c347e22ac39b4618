// berth-exec's request: what berthd writes on the helper's stdin for one ExecSync. A magic, then
// records of a one-byte tag, a 32-bit little-endian length and the value: strings end with their
// NUL (counted in the length), numbers are 8 bytes little-endian. Shared by berthd's encoder and
// the helper's parser; the parser keeps pointers into the buffer and allocates nothing, so the
// static helper links no C++ library code.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace berth::exec_wire {

constexpr char kMagic[4] = {'B', 'X', 'R', '1'};

enum Tag : uint8_t {
  kArg = 'a',  // repeated, in order; at least one
  kEnv = 'e',  // repeated "K=V"
  kCwd = 'c',
  kUid = 'u',
  kGid = 'g',
  kGroup = 'G',  // repeated: additional gids
  kUmask = 'm',
  kCapBounding = 'B',  // capability masks
  kCapEffective = 'E',
  kCapPermitted = 'P',
  kCapInheritable = 'I',
  kCapAmbient = 'A',
  kNoNewPrivs = 'n',   // 0 or 1
  kRlimit = 'r',       // 24 bytes: type, soft, hard
  kOomScoreAdj = 'o',  // signed
  kAppArmor = 'x',     // profile name
  kSeccompBpf = 's',   // struct sock_filter[]
  kSeccompFlags = 'f',
  kCgroupProcs = 'k',  // repeated: cgroup.procs files (host paths) to join
};

constexpr int kMaxArgs = 4096, kMaxEnv = 4096, kMaxGroups = 1024, kMaxRlimits = 32, kMaxCgroups = 32;

struct Rlimit {
  uint32_t type;
  uint64_t soft, hard;
};

struct ExecRequest {
  const char* argv[kMaxArgs + 1];
  int argc;
  const char* envp[kMaxEnv + 1];
  int envc;
  const char* cwd;
  uint32_t uid, gid;
  uint32_t groups[kMaxGroups];
  int ngroups;
  bool has_umask;
  uint32_t umask;
  uint64_t cap_bounding, cap_effective, cap_permitted, cap_inheritable, cap_ambient;
  bool no_new_privs;
  Rlimit rlimits[kMaxRlimits];
  int nrlimits;
  bool has_oom_score_adj;
  int64_t oom_score_adj;
  const char* apparmor;
  const void* seccomp_bpf;
  size_t seccomp_len;
  uint64_t seccomp_flags;
  const char* cgroup_procs[kMaxCgroups];
  int ncgroups;
};

// Null on success, else what is wrong (a static text). `out` points into `buf`, which must stay.
const char* parse_exec_request(const char* buf, size_t len, ExecRequest* out);

}  // namespace berth::exec_wire
