// See file_text.h.
#include "berth/file_text.h"

#include <fstream>
#include <sstream>

namespace berth {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace berth
