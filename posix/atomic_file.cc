// See atomic_file.h; the temp name carries the pid and a counter so concurrent writers of
// different targets in one directory never collide.
#include "berth/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "berth/fault_point.h"
#include "berth/unique_fd.h"

namespace berth {

namespace {
std::atomic<unsigned> temp_counter{0};
}  // namespace

Status copy_file_atomically(const std::string& from, const std::string& to, int mode) {
  UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in) return errno_status(errno, "open " + from);
  std::string temp = to + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(temp_counter++);
  UniqueFd out(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!out) return errno_status(errno, "create " + temp);
  auto fail = [&](const std::string& what) {
    int err = errno;
    ::unlink(temp.c_str());
    return errno_status(err, what, err == ENOSPC ? Code::resource_exhausted : Code::internal);
  };
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(in.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("read " + from);
    if (n == 0) break;
    for (ssize_t off = 0; off < n;) {
      ssize_t w = ::write(out.get(), buf + off, static_cast<size_t>(n - off));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return fail("write " + temp);
      off += w;
    }
  }
  if (::fchmod(out.get(), static_cast<mode_t>(mode)) != 0) return fail("chmod " + temp);
  out.reset();
  if (::rename(temp.c_str(), to.c_str()) != 0) return fail("rename " + temp + " to " + to);
  return ok_status();
}

Status write_file_atomically(const std::string& path, const std::string& content, int mode, bool durable) {
  auto& counter = temp_counter;
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string temp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  UniqueFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
  if (!fd) return errno_status(errno, "create " + temp);
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd.get(), p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::unlink(temp.c_str());
      return errno_status(err, "write " + temp, err == ENOSPC ? Code::resource_exhausted : Code::internal);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (durable && ::fsync(fd.get()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    return errno_status(err, "fsync " + temp);
  }
  fd.reset();
  fault_point(FaultPoint::atomic_write_temp_written);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    return errno_status(err, "rename " + temp + " to " + path);
  }
  if (!durable) return ok_status();
  UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dfd && ::fsync(dfd.get()) != 0) return errno_status(errno, "fsync " + dir);
  return ok_status();
}

std::vector<std::string> remove_atomic_write_leftovers(const std::string& dir) {
  std::vector<std::string> removed;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return removed;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    size_t at = name.rfind(".tmp-");
    // ".tmp-<pid>-<n>": digits, one dash, digits.
    if (at == std::string::npos || at == 0) continue;
    std::string tail = name.substr(at + 5);
    size_t dash = tail.find('-');
    if (dash == std::string::npos || dash == 0 || dash + 1 == tail.size() ||
        tail.find_first_not_of("0123456789-") != std::string::npos || tail.find('-', dash + 1) != std::string::npos)
      continue;
    if (::unlinkat(::dirfd(d), e->d_name, 0) == 0) removed.push_back(dir + "/" + name);
  }
  ::closedir(d);
  return removed;
}

}  // namespace berth
