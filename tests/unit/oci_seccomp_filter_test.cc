// compile_seccomp_filter: the program is loaded in a forked child and its answers checked against
// the section: allowed calls run, refused ones get the rule's errno, calls past the profile's
// highest get ENOSYS (runc's prefix), conditions on one argument are ORed, rules equal to the
// default are dropped; what berth does not compile is UNIMPLEMENTED and a bad section names why.
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <functional>

#include "berth/seccomp_filter.h"
#include "berth/seccomp_profile.h"

namespace berth {
namespace {

using json = nlohmann::json;

// Runs `probe` in a child under the program; its result (an errno, 0 for success) comes back as
// the exit status.
int under_filter(const SeccompProgram& p, const std::function<int()>& probe) {
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<sock_filter> insns(p.bpf.size() / sizeof(sock_filter));
    std::memcpy(insns.data(), p.bpf.data(), p.bpf.size());
    sock_fprog prog{static_cast<unsigned short>(insns.size()), insns.data()};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, p.flags, &prog) != 0)
      _exit(250);
    _exit(probe());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 251;
}

int result(long rc) { return rc < 0 ? errno : 0; }

TEST(SeccompFilter, RuntimeDefaultAnswersAsTheProfileSays) {
  auto p = compile_seccomp_filter(runtime_default_seccomp({"CAP_CHOWN"}));
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->bpf.size() % sizeof(sock_filter), 0u);
  EXPECT_EQ(under_filter(*p, [] { return result(syscall(SYS_getppid)); }), 0);
  EXPECT_EQ(under_filter(*p, [] { return result(syscall(SYS_kcmp, 0, 0, 0, 0, 0)); }), EPERM);
  EXPECT_EQ(under_filter(*p, [] { return result(syscall(SYS_clone3, nullptr, 0)); }), ENOSYS);  // its own rule
  // Numbered past every call the profile names: ENOSYS, so software falls back.
  EXPECT_EQ(under_filter(*p, [] { return result(syscall(1000)); }), ENOSYS);
  // Argument filters: personality to PER_LINUX only.
  EXPECT_EQ(under_filter(*p, [] { return result(syscall(SYS_personality, 0xffffffff)); }), 0);
  EXPECT_EQ(under_filter(*p, [] { return result(syscall(SYS_personality, ADDR_NO_RANDOMIZE)); }), EPERM);
}

TEST(SeccompFilter, ConditionsOnOneArgumentAreAlternatives) {
  json section = {{"defaultAction", "SCMP_ACT_ALLOW"},
                  {"syscalls",
                   {{{"names", {"getpriority"}},
                     {"action", "SCMP_ACT_ERRNO"},
                     {"errnoRet", EACCES},
                     {"args",
                      {{{"index", 0}, {"value", PRIO_PGRP}, {"op", "SCMP_CMP_EQ"}},
                       {{"index", 0}, {"value", PRIO_USER}, {"op", "SCMP_CMP_EQ"}}}}},
                    {{"names", {"getppid", "no_such_call_name"}}, {"action", "SCMP_ACT_ALLOW"}}}}};
  auto p = compile_seccomp_filter(section);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(under_filter(*p, [] { return result(syscall(SYS_getpriority, PRIO_PROCESS, 0)); }), 0);
  EXPECT_EQ(under_filter(*p, [] { return result(syscall(SYS_getpriority, PRIO_PGRP, 0)); }), EACCES);
  EXPECT_EQ(under_filter(*p, [] { return result(syscall(SYS_getpriority, PRIO_USER, 0)); }), EACCES);
  // An allowing default: no ENOSYS prefix.
  EXPECT_EQ(under_filter(*p, [] { return result(syscall(1000)); }), ENOSYS);  // the kernel's own answer
}

TEST(SeccompFilter, WhatItDoesNotCompileOrCannotRead) {
  EXPECT_EQ(compile_seccomp_filter({{"defaultAction", "SCMP_ACT_NOTIFY"}}).status().code(), Code::unimplemented);
  EXPECT_EQ(
      compile_seccomp_filter({{"defaultAction", "SCMP_ACT_ALLOW"}, {"listenerPath", "/run/x.sock"}}).status().code(),
      Code::unimplemented);
  EXPECT_EQ(compile_seccomp_filter({{"defaultAction", "SCMP_ACT_ALLOW"},
                                    {"syscalls", {{{"names", {"read"}}, {"action", "SCMP_ACT_NOTIFY"}}}}})
                .status()
                .code(),
            Code::unimplemented);
  EXPECT_EQ(
      compile_seccomp_filter({{"defaultAction", "SCMP_ACT_ALLOW"}, {"flags", {"SECCOMP_FILTER_FLAG_NEW_LISTENER"}}})
          .status()
          .code(),
      Code::unimplemented);
  auto bad = compile_seccomp_filter({{"defaultAction", "SCMP_ACT_ERRNO"},
                                     {"syscalls",
                                      {{{"names", {"read"}},
                                        {"action", "SCMP_ACT_ALLOW"},
                                        {"args", {{{"index", 9}, {"value", 1}, {"op", "SCMP_CMP_EQ"}}}}}}}});
  EXPECT_EQ(bad.status().code(), Code::invalid_argument);
  EXPECT_NE(bad.status().message().find("index: 9 is above 5"), std::string::npos) << bad.status().message();
  EXPECT_EQ(compile_seccomp_filter({{"syscalls", json::array()}}).status().code(), Code::invalid_argument);
  EXPECT_EQ(compile_seccomp_filter({{"defaultAction", "SCMP_ACT_ALLOW"}, {"architectures", {"SCMP_ARCH_PDP11"}}})
                .status()
                .code(),
            Code::invalid_argument);
}

TEST(SeccompFilter, SpecAllowFlagIsKept) {
  auto p = compile_seccomp_filter(
      {{"defaultAction", "SCMP_ACT_ALLOW"}, {"flags", {"SECCOMP_FILTER_FLAG_SPEC_ALLOW", "SECCOMP_FILTER_FLAG_LOG"}}});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->flags, unsigned{SECCOMP_FILTER_FLAG_SPEC_ALLOW | SECCOMP_FILTER_FLAG_LOG});
}

}  // namespace
}  // namespace berth
