// Temp directories that clean up after failed tests too, including mounts left below them.
#include "berth/test/temp_dir.h"

#include <stdlib.h>
#include <sys/mount.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace berth::test {

TempDir::TempDir(const std::string& prefix) {
  std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp " + tmpl);
  path_ = tmpl;
}

TempDir::~TempDir() {
  // Unmount anything still mounted below the directory, deepest first.
  std::ifstream mi("/proc/self/mountinfo");
  std::vector<std::string> mounts;
  std::string line;
  while (std::getline(mi, line)) {
    std::istringstream ls(line);
    std::string id, parent, devno, root, mp;
    ls >> id >> parent >> devno >> root >> mp;
    if (mp.rfind(path_ + "/", 0) == 0) mounts.push_back(mp);
  }
  for (auto it = mounts.rbegin(); it != mounts.rend(); ++it) umount2(it->c_str(), MNT_DETACH);
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& content, int mode) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
  }
  std::filesystem::permissions(path, static_cast<std::filesystem::perms>(mode));
}

}  // namespace berth::test
