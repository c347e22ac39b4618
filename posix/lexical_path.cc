// See lexical_path.h.
#include "berth/lexical_path.h"

#include <filesystem>

namespace berth {

std::string lexically_normal_dir(const std::string& path) {
  if (path.empty()) return path;
  std::string out = std::filesystem::path(path).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

}  // namespace berth
