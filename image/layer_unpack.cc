// libarchive reads the stream and writes files (owners, modes, times, xattrs, hardlinks, symlinks,
// device nodes). berth handles only what libarchive cannot know: every path is normalised and must
// stay inside the layer root, and OCI whiteouts (".wh.<name>", ".wh..wh..opq") become overlayfs
// whiteouts (a 0:0 character device, the trusted.overlay.opaque xattr). ARCHIVE_EXTRACT_SECURE_SYMLINKS
// stops an entry from being written through a symlink an earlier entry planted.
#include "layer_unpack.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <vector>

#include "pull_libraries.h"

namespace berth {

namespace {

struct ReadFree {
  const ArchiveLibrary* api;
  void operator()(archive* a) const { api->read_free(a); }
};
struct WriteFree {
  const ArchiveLibrary* api;
  void operator()(archive* a) const { api->write_free(a); }
};

// "./a/b/../c" -> "a/c"; nullopt when ".." would climb above the root.
std::optional<std::string> normalise(const std::string& path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    std::string comp = path.substr(i, j == std::string::npos ? std::string::npos : j - i);
    if (comp == "..") {
      if (parts.empty()) return std::nullopt;
      parts.pop_back();
    } else if (!comp.empty() && comp != ".") {
      parts.push_back(comp);
    }
    if (j == std::string::npos) break;
    i = j + 1;
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

Status make_parents(const std::string& dest, const std::string& rel) {
  size_t pos = 0;
  while ((pos = rel.find('/', pos)) != std::string::npos) {
    std::string dir = dest + "/" + rel.substr(0, pos);
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return errno_status(errno, "mkdir " + dir);
    ++pos;
  }
  return ok_status();
}

}  // namespace

Status unpack_layer(const std::string& blob_path, const std::string& dest, const std::string& what) {
  auto libs = pull_libraries();
  if (!libs.ok()) return libs.status().context(what);
  const ArchiveLibrary& api = (*libs)->archive;
  std::unique_ptr<archive, ReadFree> in(api.read_new(), ReadFree{&api});
  api.read_support_filter_all(in.get());
  api.read_support_format_tar(in.get());
  api.read_support_format_gnutar(in.get());
  if (api.read_open_filename(in.get(), blob_path.c_str(), 1 << 16) != ARCHIVE_OK)
    return internal_error(what + ": open: " + api.error_string(in.get()));
  std::unique_ptr<archive, WriteFree> out(api.write_disk_new(), WriteFree{&api});
  api.write_disk_set_options(out.get(), ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_OWNER |
                                                ARCHIVE_EXTRACT_XATTR | ARCHIVE_EXTRACT_ACL | ARCHIVE_EXTRACT_UNLINK |
                                                ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT);
  api.write_disk_set_standard_lookup(out.get());

  for (;;) {
    archive_entry* entry = nullptr;
    int r = api.read_next_header(in.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) return internal_error(what + ": read: " + api.error_string(in.get()));
    std::string raw = api.entry_pathname(entry) ? api.entry_pathname(entry) : "";
    auto rel = normalise(raw);
    if (!rel) return invalid_argument(what + ": entry '" + raw + "' escapes the layer root; layer refused");
    if (rel->empty()) continue;  // the root itself
    std::string base = rel->substr(rel->rfind('/') + 1);
    std::string parent = rel->find('/') == std::string::npos ? "" : rel->substr(0, rel->rfind('/'));
    if (base.rfind(".wh.", 0) == 0) {
      if (Status s = make_parents(dest, *rel); !s.ok()) return s.context(what);
      std::string parent_path = dest + (parent.empty() ? "" : "/" + parent);
      if (base == ".wh..wh..opq") {
        if (::lsetxattr(parent_path.c_str(), "trusted.overlay.opaque", "y", 1, 0) != 0)
          return errno_status(errno, what + ": mark " + parent + " opaque");
      } else {
        std::string target = parent_path + "/" + base.substr(4);
        ::unlink(target.c_str());
        if (::mknod(target.c_str(), S_IFCHR | 0, makedev(0, 0)) != 0)
          return errno_status(errno, what + ": whiteout " + base.substr(4));
      }
      continue;
    }
    if (const char* link = api.entry_hardlink(entry)) {
      auto target = normalise(link);
      if (!target || target->empty())
        return invalid_argument(what + ": hardlink '" + raw + "' -> '" + link + "' escapes the layer root; layer refused");
      api.entry_set_hardlink(entry, (dest + "/" + *target).c_str());
    }
    api.entry_set_pathname(entry, (dest + "/" + *rel).c_str());
    r = api.write_header(out.get(), entry);
    if (r < ARCHIVE_WARN) return internal_error(what + ": extract " + *rel + ": " + api.error_string(out.get()));
    if (api.entry_size(entry) > 0 && api.entry_hardlink(entry) == nullptr) {
      const void* buf;
      size_t size;
      la_int64_t offset;
      while ((r = api.read_data_block(in.get(), &buf, &size, &offset)) == ARCHIVE_OK) {
        if (api.write_data_block(out.get(), buf, size, offset) < ARCHIVE_WARN) {
          std::string err = api.error_string(out.get());
          return Status(err.find("space") != std::string::npos ? Code::resource_exhausted : Code::internal,
                        what + ": write " + *rel + ": " + err);
        }
      }
      if (r < ARCHIVE_WARN) return internal_error(what + ": read " + *rel + ": " + api.error_string(in.get()));
    }
    if (api.write_finish_entry(out.get()) < ARCHIVE_WARN)
      return internal_error(what + ": finish " + *rel + ": " + api.error_string(out.get()));
  }
  if (api.write_close(out.get()) < ARCHIVE_WARN) return internal_error(what + ": close: " + api.error_string(out.get()));
  return ok_status();
}

}  // namespace berth
