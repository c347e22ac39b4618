// Reference grammar (distribution's): [domain/]path-component(/path-component)*[:tag][@digest];
// a first component is a domain when it has a '.' or ':' or is "localhost".
#include "berth/image_reference.h"

#include <cctype>
#include <vector>

namespace berth {

bool is_sha256_digest(const std::string& s) {
  if (s.size() != 71 || s.rfind("sha256:", 0) != 0) return false;
  for (size_t i = 7; i < s.size(); ++i)
    if (!std::isxdigit(static_cast<unsigned char>(s[i])) || std::isupper(static_cast<unsigned char>(s[i])))
      return false;
  return true;
}

namespace {

// lowercase alphanumerics separated by one '.', one or two '_', or any number of '-'.
bool valid_component(const std::string& c) {
  auto alnum = [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) || (ch >= 'a' && ch <= 'z'); };
  size_t i = 0;
  while (i < c.size()) {
    if (!alnum(c[i])) return false;
    while (i < c.size() && alnum(c[i])) ++i;
    if (i == c.size()) return true;
    size_t sep = i;
    if (c[i] == '.')
      ++i;
    else if (c[i] == '_')
      i += (i + 1 < c.size() && c[i + 1] == '_') ? 2 : 1;
    else if (c[i] == '-')
      while (i < c.size() && c[i] == '-') ++i;
    else
      return false;
    if (i == sep || i == c.size()) return false;  // a separator must sit between alphanumerics
  }
  return !c.empty();
}

bool valid_tag(const std::string& t) {
  if (t.empty() || t.size() > 128) return false;
  unsigned char first = static_cast<unsigned char>(t[0]);
  if (!std::isalnum(first) && first != '_') return false;
  for (unsigned char ch : t)
    if (!std::isalnum(ch) && ch != '_' && ch != '.' && ch != '-') return false;
  return true;
}

bool valid_domain(const std::string& d) {
  if (d.empty()) return false;
  for (unsigned char ch : d)
    if (!std::isalnum(ch) && ch != '.' && ch != '-' && ch != ':' && ch != '[' && ch != ']') return false;
  return true;
}

}  // namespace

std::string ImageReference::string() const {
  std::string s = name();
  if (!tag.empty()) s += ":" + tag;
  if (!digest.empty()) s += "@" + digest;
  return s;
}

std::string ImageReference::api_host() const { return domain == "docker.io" ? "registry-1.docker.io" : domain; }

Result<ImageReference> parse_image_reference(const std::string& text) {
  auto bad = [&](const std::string& why) { return invalid_argument("image reference '" + text + "': " + why); };
  if (text.empty()) return bad("is empty");
  if (text.size() > 4096) return bad("is longer than 4096 characters");
  ImageReference ref;
  std::string rest = text;
  if (size_t at = rest.find('@'); at != std::string::npos) {
    ref.digest = rest.substr(at + 1);
    rest = rest.substr(0, at);
    if (!is_sha256_digest(ref.digest)) return bad("digest '" + ref.digest + "' is not sha256:<64 lowercase hex>");
  }
  size_t slash = rest.rfind('/');
  size_t colon = rest.rfind(':');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    ref.tag = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
    if (!valid_tag(ref.tag)) return bad("tag '" + ref.tag + "' is not valid");
  }
  if (rest.empty()) return bad("has no repository name");
  size_t first = rest.find('/');
  std::string head = rest.substr(0, first);
  if (first != std::string::npos &&
      (head.find('.') != std::string::npos || head.find(':') != std::string::npos || head == "localhost")) {
    ref.domain = head;
    ref.repository = rest.substr(first + 1);
    if (!valid_domain(ref.domain)) return bad("registry '" + ref.domain + "' is not a valid host[:port]");
  } else {
    ref.domain = "docker.io";
    ref.repository = rest;
  }
  if (ref.domain == "index.docker.io") ref.domain = "docker.io";
  if (ref.domain == "docker.io" && ref.repository.find('/') == std::string::npos)
    ref.repository = "library/" + ref.repository;
  size_t start = 0;
  while (start <= ref.repository.size()) {
    size_t end = ref.repository.find('/', start);
    std::string comp = ref.repository.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!valid_component(comp))
      return bad("repository component '" + comp +
                 "' must be lowercase letters and digits separated by '.', '_' or '-'");
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (ref.name().size() > 255) return bad("name is longer than 255 characters");
  if (ref.tag.empty() && ref.digest.empty()) ref.tag = "latest";
  return ref;
}

}  // namespace berth
