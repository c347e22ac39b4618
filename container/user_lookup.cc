// A container's uid, gid and groups from run_as_* and the image's User, looked up in the image's
// own passwd and group files, read with read_regular_file_in_root: a symlink in an image can never
// make berthd read a host file, and a FIFO or device there cannot block it.

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <sstream>

#include "berth/container_process.h"
#include "berth/bounded_read.h"

namespace berth {

namespace {

struct FileLines {
  bool exists = false;
  std::vector<std::vector<std::string>> records;  // colon-separated fields per line
};

Result<FileLines> read_colon_file(const std::string& rootfs, const char* rel) {
  FileLines out;
  auto text = read_regular_file_in_root(rootfs, rel, 16u << 20, std::string(rel) + " in the image");
  if (!text.ok()) return text.status().code() == Code::not_found ? Result<FileLines>(out) : text.status();
  out.exists = true;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::istringstream ls(line);
    for (std::string f; std::getline(ls, f, ':');) fields.push_back(f);
    if (line.back() == ':') fields.emplace_back();
    out.records.push_back(std::move(fields));
  }
  return out;
}

std::optional<uint32_t> parse_id(const std::string& s) {
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// passwd: name:pw:uid:gid:gecos:home:shell ; group: name:pw:gid:member,member
const std::vector<std::string>* find_by(const FileLines& f, size_t field, const std::string& value) {
  for (const auto& r : f.records)
    if (r.size() > 3 && r[field] == value) return &r;
  return nullptr;
}

Result<uint32_t> checked_id(int64_t v, const char* field) {
  if (v < 0 || v > 0xFFFFFFFEll)
    return invalid_argument(std::string(field) + ": " + std::to_string(v) + " is not a valid id");
  return static_cast<uint32_t>(v);
}

}  // namespace

Result<ResolvedUser> resolve_user(const std::string& rootfs, const UserRequest& req) {
  auto passwd = read_colon_file(rootfs, "etc/passwd");
  if (!passwd.ok()) return passwd.status();
  auto group = read_colon_file(rootfs, "etc/group");
  if (!group.ok()) return group.status();

  ResolvedUser u;
  bool gid_known = false;
  auto take_passwd = [&](const std::vector<std::string>& r) {
    u.username = r[0];
    u.uid = parse_id(r[2]).value_or(0);
    if (auto g = parse_id(r[3])) {
      u.gid = *g;
      gid_known = true;
    }
  };

  if (!req.run_as_username.empty()) {
    const auto* r = find_by(*passwd, 0, req.run_as_username);
    if (!r)
      return invalid_argument("linux.security_context.run_as_username: user '" + req.run_as_username +
                              "' is not in the image's /etc/passwd");
    take_passwd(*r);
  } else if (req.run_as_user) {
    auto uid = checked_id(*req.run_as_user, "linux.security_context.run_as_user");
    if (!uid.ok()) return uid.status();
    u.uid = *uid;
    if (const auto* r = find_by(*passwd, 2, std::to_string(u.uid))) take_passwd(*r);
  } else if (!req.image_user.empty()) {
    std::string user = req.image_user, grp;
    if (size_t colon = user.find(':'); colon != std::string::npos) {
      grp = user.substr(colon + 1);
      user = user.substr(0, colon);
    }
    if (auto uid = parse_id(user)) {
      u.uid = *uid;
      if (const auto* r = find_by(*passwd, 2, user)) take_passwd(*r);
    } else {
      const auto* r = find_by(*passwd, 0, user);
      if (!r)
        return invalid_argument("image User '" + req.image_user + "': user '" + user +
                                "' is not in the image's /etc/passwd");
      take_passwd(*r);
    }
    if (!grp.empty()) {
      if (auto gid = parse_id(grp)) {
        u.gid = *gid;
      } else {
        const auto* r = find_by(*group, 0, grp);
        if (!r)
          return invalid_argument("image User '" + req.image_user + "': group '" + grp +
                                  "' is not in the image's /etc/group");
        u.gid = parse_id((*r)[2]).value_or(0);
      }
      gid_known = true;
    }
  }
  if (req.run_as_group) {
    if (req.run_as_username.empty() && !req.run_as_user)
      return invalid_argument("linux.security_context.run_as_group: needs run_as_user or run_as_username");
    auto gid = checked_id(*req.run_as_group, "linux.security_context.run_as_group");
    if (!gid.ok()) return gid.status();
    u.gid = *gid;
    gid_known = true;
  }
  if (!gid_known) u.gid = 0;

  auto add_gid = [&](uint32_t g) {
    if (std::find(u.additional_gids.begin(), u.additional_gids.end(), g) == u.additional_gids.end())
      u.additional_gids.push_back(g);
  };
  if (!u.username.empty() && !req.strict_supplemental_groups) {
    for (const auto& r : group->records) {
      if (r.size() < 4) continue;
      std::istringstream members(r[3]);
      for (std::string m; std::getline(members, m, ',');) {
        if (m == u.username) {
          if (auto g = parse_id(r[2])) add_gid(*g);
        }
      }
    }
  }
  for (int64_t g : req.supplemental_groups) {
    auto gid = checked_id(g, "linux.security_context.supplemental_groups");
    if (!gid.ok()) return gid.status();
    add_gid(*gid);
  }
  return u;
}

}  // namespace berth
