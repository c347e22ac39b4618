// CDI spec dir listing and change stamps; see spec_dir.h.
#include "spec_dir.h"

#include <dirent.h>
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

// Generous: local filesystems tick in milliseconds, NFS and others in up to a second or two.
constexpr int64_t kTimestampSlackNs = 2'000'000'000;

}  // namespace

std::vector<SpecDirEntry> list_spec_dir(const std::string& dir) {
  std::vector<SpecDirEntry> out;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return out;
  while (struct dirent* e = ::readdir(d.get())) {
    std::string name = e->d_name;
    if (!spec_name(name)) continue;
    SpecDirEntry entry{dir + "/" + name, {}};
    struct stat st {};
    if (::stat(entry.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    entry.stamp = {st.st_dev, st.st_ino, st.st_size, ns(st.st_mtim), ns(st.st_ctim)};
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
