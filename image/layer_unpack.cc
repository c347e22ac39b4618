// libarchive reads the stream and writes files (owners, modes, times, xattrs, hardlinks, symlinks,
// device nodes). berth handles only what libarchive cannot know: every path is normalised and must
// stay inside the layer root, and OCI whiteouts (".wh.<name>", ".wh..wh..opq") become overlayfs
// whiteouts (a 0:0 character device, the trusted.overlay.opaque xattr). ARCHIVE_EXTRACT_SECURE_SYMLINKS
// stops an entry from being written through a symlink an earlier entry planted; whiteouts, applied
// here, walk their directories with O_NOFOLLOW for the same reason. A gzip layer of one member
// and moderate size is inflated whole with libdeflate first (twice zlib's speed), then read by
// libarchive from memory; any other layer, or a node without libdeflate, streams through libarchive.
#include "layer_unpack.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "berth/unique_fd.h"
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

// The directory rel (a normalised path, "" for the root) under root_fd, made where missing. No
// component may be a symlink: whiteouts are applied by berth, not by libarchive, so its
// SECURE_SYMLINKS check does not cover them, and a planted "x -> /etc" must not turn
// "x/.wh.passwd" into an unlink on the host.
Result<UniqueFd> open_dir_beneath(int root_fd, const std::string& rel) {
  UniqueFd dir(::fcntl(root_fd, F_DUPFD_CLOEXEC, 0));
  if (!dir) return errno_status(errno, "dup");
  size_t i = 0;
  while (i < rel.size()) {
    size_t j = rel.find('/', i);
    std::string comp = rel.substr(i, j == std::string::npos ? std::string::npos : j - i);
    int fd = ::openat(dir.get(), comp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
      if (::mkdirat(dir.get(), comp.c_str(), 0755) != 0 && errno != EEXIST) return errno_status(errno, "mkdir " + rel);
      fd = ::openat(dir.get(), comp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0 && (errno == ELOOP || errno == ENOTDIR))
      return invalid_argument("'" + rel + "' goes through a symlink or a file, which a whiteout may not");
    if (fd < 0) return errno_status(errno, "open " + rel);
    dir = UniqueFd(fd);
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return dir;
}

Status apply_whiteout(int root_fd, const std::string& parent, const std::string& base) {
  auto dir = open_dir_beneath(root_fd, parent);
  if (!dir.ok()) return dir.status();
  if (base == ".wh..wh..opq") {
    if (::fsetxattr(dir->get(), "trusted.overlay.opaque", "y", 1, 0) != 0)
      return errno_status(errno, "mark " + parent + " opaque");
    return ok_status();
  }
  std::string name = base.substr(4);
  if (name.empty() || name == "." || name == "..") return invalid_argument("whiteout '" + base + "' names no entry");
  if (::unlinkat(dir->get(), name.c_str(), 0) != 0 && errno == EISDIR)
    ::unlinkat(dir->get(), name.c_str(), AT_REMOVEDIR);
  if (::mknodat(dir->get(), name.c_str(), S_IFCHR | 0, makedev(0, 0)) != 0)
    return errno_status(errno, "whiteout " + name);
  return ok_status();
}

// A failed write into the layer: a full filesystem (space or inodes) is the node's to fix, not a bug.
Status write_failure(const ArchiveLibrary& api, archive* out, const std::string& message) {
  int e = api.errno_of(out);
  Code code = e == ENOSPC || e == EDQUOT ? Code::resource_exhausted : Code::internal;
  return Status(code, message + ": " + api.error_string(out));
}

// What is inflated whole at most (the blob, and its tar as the gzip trailer states it); larger
// layers stream, so a helper's memory stays bounded whatever the image.
constexpr size_t kWholeInflateBlobBytes = 32u << 20;
constexpr size_t kWholeInflateTarBytes = 128u << 20;

struct InflatedTar {
  std::unique_ptr<unsigned char[]> bytes;
  size_t size = 0;
};

// The tar inside a one-member gzip blob, inflated with libdeflate; nullopt when that does not
// apply (no libdeflate, not gzip, too large, more than one member, a trailer that does not match):
// libarchive then streams the blob and reports what is wrong with it, if anything.
std::optional<InflatedTar> inflate_whole(const DeflateLibrary& d, const std::string& blob_path) {
  if (!d.alloc_decompressor) return std::nullopt;
  UniqueFd fd(::open(blob_path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || st.st_size < 18 ||
      static_cast<uint64_t>(st.st_size) > kWholeInflateBlobBytes)
    return std::nullopt;
  std::vector<unsigned char> blob(static_cast<size_t>(st.st_size));
  for (size_t got = 0; got < blob.size();) {
    ssize_t n = ::read(fd.get(), blob.data() + got, blob.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    got += static_cast<size_t>(n);
  }
  if (blob[0] != 0x1f || blob[1] != 0x8b) return std::nullopt;
  const size_t n = blob.size();
  const uint32_t isize =
      uint32_t{blob[n - 4]} | uint32_t{blob[n - 3]} << 8 | uint32_t{blob[n - 2]} << 16 | uint32_t{blob[n - 1]} << 24;
  if (isize == 0 || isize > kWholeInflateTarBytes) return std::nullopt;
  InflatedTar tar{std::unique_ptr<unsigned char[]>(new unsigned char[isize]), 0};
  libdeflate_decompressor* dec = d.alloc_decompressor();
  if (!dec) return std::nullopt;
  size_t used = 0;
  libdeflate_result r = d.gzip_decompress_ex(dec, blob.data(), n, tar.bytes.get(), isize, &used, &tar.size);
  d.free_decompressor(dec);
  if (r != LIBDEFLATE_SUCCESS || used != n || tar.size != isize) return std::nullopt;
  return tar;
}

}  // namespace

Status make_overlay_whiteout(const std::string& root, const std::string& rel) {
  UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd) return errno_status(errno, "open " + root);
  size_t slash = rel.rfind('/');
  std::string parent = slash == std::string::npos ? "" : rel.substr(0, slash);
  return apply_whiteout(root_fd.get(), parent, ".wh." + rel.substr(slash == std::string::npos ? 0 : slash + 1));
}

Status unpack_layer(const std::string& blob_path, const std::string& dest, const std::string& what, bool from_inside) {
  if (from_inside && ::chdir(dest.c_str()) != 0) return errno_status(errno, what + ": chdir " + dest);
  struct BackToRoot {
    bool on;
    ~BackToRoot() {
      if (on) (void)!::chdir("/");
    }
  } back{from_inside};
  // Where libarchive writes an entry: relative to `dest` when working from inside it.
  const std::string prefix = from_inside ? "" : dest + "/";
  auto libs = pull_libraries(PullLibrary::archive);
  if (!libs.ok()) return libs.status().context(what);
  const ArchiveLibrary& api = (*libs)->archive;
  std::unique_ptr<archive, ReadFree> in(api.read_new(), ReadFree{&api});
  // The layer compressions OCI defines, each decoded in the library (ARCHIVE_OK): every other
  // filter, and these where the library lacks the codec, would fork an outside program (lrzip,
  // lzop, grzip...) that gets whatever this process holds.
  if (api.read_support_filter_gzip(in.get()) != ARCHIVE_OK || api.read_support_filter_zstd(in.get()) != ARCHIVE_OK)
    return internal_error(what + ": libarchive decodes gzip or zstd only through an outside program");
  api.read_support_format_tar(in.get());
  api.read_support_format_gnutar(in.get());
  auto whole = inflate_whole((*libs)->deflate, blob_path);
  const int opened = whole ? api.read_open_memory(in.get(), whole->bytes.get(), whole->size)
                           : api.read_open_filename(in.get(), blob_path.c_str(), 1 << 16);
  if (opened != ARCHIVE_OK) return internal_error(what + ": open: " + api.error_string(in.get()));
  std::unique_ptr<archive, WriteFree> out(api.write_disk_new(), WriteFree{&api});
  api.write_disk_set_options(out.get(), ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_OWNER |
                                            ARCHIVE_EXTRACT_XATTR | ARCHIVE_EXTRACT_ACL | ARCHIVE_EXTRACT_UNLINK |
                                            ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT);
  api.write_disk_set_standard_lookup(out.get());
  UniqueFd root_fd;  // opened at the first whiteout

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
      if (!root_fd) {
        root_fd = UniqueFd(::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!root_fd) return errno_status(errno, what + ": open " + dest);
      }
      if (Status s = apply_whiteout(root_fd.get(), parent, base); !s.ok()) {
        if (s.code() == Code::invalid_argument)
          return invalid_argument(what + ": whiteout '" + raw + "' escapes the layer root: " + s.message() +
                                  "; layer refused");
        return s.context(what + " in " + dest);
      }
      continue;
    }
    if (const char* link = api.entry_hardlink(entry)) {
      auto target = normalise(link);
      if (!target || target->empty())
        return invalid_argument(what + ": hardlink '" + raw + "' -> '" + link +
                                "' escapes the layer root; layer refused");
      api.entry_set_hardlink(entry, (prefix + *target).c_str());
    }
    api.entry_set_pathname(entry, (prefix + *rel).c_str());
    r = api.write_header(out.get(), entry);
    if (r < ARCHIVE_WARN) return write_failure(api, out.get(), what + ": extract " + dest + "/" + *rel);
    if (api.entry_size(entry) > 0 && api.entry_hardlink(entry) == nullptr) {
      const void* buf;
      size_t size;
      la_int64_t offset;
      while ((r = api.read_data_block(in.get(), &buf, &size, &offset)) == ARCHIVE_OK) {
        if (api.write_data_block(out.get(), buf, size, offset) < ARCHIVE_WARN)
          return write_failure(api, out.get(), what + ": write " + dest + "/" + *rel);
      }
      if (r < ARCHIVE_WARN) return internal_error(what + ": read " + *rel + ": " + api.error_string(in.get()));
    }
    if (api.write_finish_entry(out.get()) < ARCHIVE_WARN)
      return write_failure(api, out.get(), what + ": finish " + dest + "/" + *rel);
  }
  if (api.write_close(out.get()) < ARCHIVE_WARN) return write_failure(api, out.get(), what + ": close " + dest);
  return ok_status();
}

}  // namespace berth
