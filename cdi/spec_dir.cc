// CDI spec dir listing and change stamps; see spec_dir.h.
#include "spec_dir.h"

#include <dirent.h>
#include <stdio.h>
#include <time.h>

#include <algorithm>
#include <memory>

namespace berth::cdi {
namespace {

bool spec_name(const std::string& name) {
  auto ends = [&](const char* ext) {
    size_t n = std::char_traits<char>::length(ext);
    return name.size() > n && name.compare(name.size() - n, n, ext) == 0;
  };
  return name[0] != '.' && (ends(".json") || ends(".yaml") || ends(".yml"));
}

int64_t ns(const struct timespec& t) { return int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

// "" when only root can change it, else who else can.
std::string writers_besides_root(const struct stat& st) {
  char mode[8];
  snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  if (st.st_uid != 0) return "owned by uid " + std::to_string(st.st_uid);
  if (st.st_mode & S_IWOTH) return std::string("writable by every user (mode ") + mode + ")";
  if (st.st_mode & S_IWGRP && st.st_gid != 0)
    return "writable by group " + std::to_string(st.st_gid) + " (mode " + mode + ")";
  return "";
}

// Generous: local filesystems tick in milliseconds, NFS and others in up to a second or two.
constexpr int64_t kTimestampSlackNs = 2'000'000'000;

}  // namespace

std::vector<SpecDirEntry> list_spec_dir(const std::string& dir) {
  std::vector<SpecDirEntry> out;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return out;
  struct stat dir_st {};
  std::string dir_untrusted;
  if (::fstat(::dirfd(d.get()), &dir_st) == 0) {
    if (std::string who = writers_besides_root(dir_st); !who.empty()) dir_untrusted = "its dir " + dir + " is " + who;
  }
  while (struct dirent* e = ::readdir(d.get())) {
    std::string name = e->d_name;
    if (!spec_name(name)) continue;
    SpecDirEntry entry{dir + "/" + name, {}};
    struct stat st {};
    if (::stat(entry.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    entry.stamp = {st.st_dev, st.st_ino, st.st_size, ns(st.st_mtim), ns(st.st_ctim)};
    if (std::string who = writers_besides_root(st); !who.empty()) entry.untrusted = "it is " + who;
    if (!dir_untrusted.empty()) entry.untrusted = dir_untrusted;
    out.push_back(std::move(entry));
  }
  std::sort(out.begin(), out.end(), [](const SpecDirEntry& a, const SpecDirEntry& b) { return a.path < b.path; });
  return out;
}

int64_t wall_clock_ns() {
  struct timespec t {};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return ns(t);
}

bool stamp_is_racy(const FileStamp& stamp, int64_t read_at_ns) {
  return std::max(stamp.mtime_ns, stamp.ctime_ns) + kTimestampSlackNs > read_at_ns;
}

}  // namespace berth::cdi
