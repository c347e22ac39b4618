// unshare(CLONE_NEWNET) only moves the calling thread, so a short-lived thread makes the netns,
// pins it, sets lo up, and ends: berthd's other threads never change namespace.
#include "netns.h"

#include <fcntl.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "berth/rollback.h"
#include "berth/unique_fd.h"

namespace berth {

namespace {

Status bring_loopback_up() {
  nl_sock* sock = nl_socket_alloc();
  if (!sock) return internal_error("netlink: cannot allocate a socket");
  struct Guard {
    nl_sock* s;
    rtnl_link* link = nullptr;
    rtnl_link* change = nullptr;
    ~Guard() {
      if (change) rtnl_link_put(change);
      if (link) rtnl_link_put(link);
      nl_socket_free(s);
    }
  } g{sock};
  if (int e = nl_connect(sock, NETLINK_ROUTE); e < 0)
    return internal_error(std::string("netlink connect: ") + nl_geterror(e));
  if (int e = rtnl_link_get_kernel(sock, 0, "lo", &g.link); e < 0)
    return internal_error(std::string("netlink get lo: ") + nl_geterror(e));
  g.change = rtnl_link_alloc();
  rtnl_link_set_flags(g.change, IFF_UP);
  if (int e = rtnl_link_change(sock, g.link, g.change, 0); e < 0)
    return internal_error(std::string("netlink set lo up: ") + nl_geterror(e));
  return ok_status();
}

}  // namespace

Result<std::string> create_pinned_netns(const std::string& dir, const std::string& id) {
  std::string path = dir + "/" + id;
  UniqueFd f(::open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444));
  if (!f) return errno_status(errno, "pin netns: create " + path);
  f.reset();
  Status result;
  std::thread t([&] {
    if (::unshare(CLONE_NEWNET) != 0) {
      result = errno_status(errno, "pin netns: unshare");
      return;
    }
    std::string self = "/proc/self/task/" + std::to_string(::syscall(SYS_gettid)) + "/ns/net";
    if (::mount(self.c_str(), path.c_str(), nullptr, MS_BIND, nullptr) != 0) {
      result = errno_status(errno, "pin netns: bind mount");
      return;
    }
    result = bring_loopback_up().context("pin netns");
  });
  t.join();
  if (!result.ok()) {
    ::umount2(path.c_str(), MNT_DETACH);
    ::unlink(path.c_str());
    return result;
  }
  return path;
}

Status create_pinned_userns_netns(const std::vector<IdMapping>& uids, const std::vector<IdMapping>& gids,
                                  const std::string& userns_pin, const std::string& netns_pin) {
  if (Status s = create_pinned_user_and_net_ns(uids, gids, userns_pin, netns_pin); !s.ok()) return s;
  UniqueFd ns(::open(netns_pin.c_str(), O_RDONLY | O_CLOEXEC));
  Status result = ns ? ok_status() : errno_status(errno, "open " + netns_pin);
  if (ns) {
    // berthd, root outside, holds every capability over the pod's user namespace and so over its
    // netns: a thread of its own joins it, sets lo up and ends.
    std::thread t([&] {
      if (::setns(ns.get(), CLONE_NEWNET) != 0)
        result = errno_status(errno, "setns " + netns_pin);
      else
        result = bring_loopback_up();
    });
    t.join();
  }
  if (!result.ok()) {
    // The error to report is the loopback's; an unpin that fails too is logged with its step
    // (the pins' sweep at the next start removes what stays).
    Rollback undo("pod namespaces " + netns_pin);
    undo.add("unpin user namespace", [&] { return remove_namespace_pin(userns_pin); });
    undo.add("unpin network namespace", [&] { return remove_namespace_pin(netns_pin); });
    return result.context("pod network namespace");
  }
  return ok_status();
}

Status remove_pinned_netns(const std::string& path) { return remove_namespace_pin(path); }

}  // namespace berth
