// See object_id.h. getrandom: an id must not be guessable or repeat across restarts.
#include "berth/object_id.h"

#include <sys/random.h>

#include <cstdlib>

namespace berth {

std::string new_object_id() {
  unsigned char b[32];
  if (::getrandom(b, sizeof b, 0) != sizeof b)
    for (auto& c : b) c = static_cast<unsigned char>(::random());
  static const char* hex = "0123456789abcdef";
  std::string id;
  for (unsigned char c : b) {
    id += hex[c >> 4];
    id += hex[c & 15];
  }
  return id;
}

}  // namespace berth
