// TempDir: a fresh directory under /tmp removed with everything in it (unmounting what a test
// left mounted below it first) when the owner goes away, also when the test failed.
#pragma once

#include <string>

namespace berth::test {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "berth-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& content, int mode = 0644);

}  // namespace berth::test
