// Checkpoint archives with libarchive (linked here directly: only berth-checkpoint-archive and the
// tests link this file, never berthd). Reading is the hostile side: an archive may come from
// anywhere (kubelet passes a path, an image may hold one), so its entries are written by hand
// beneath the destination with openat2 (RESOLVE_BENEATH, no symlinks) and only as plain
// directories and files; nothing of the archive's owners, modes or links survives.
// An opaque directory of the upper dir (the container removed a directory and made it again) is
// written whole, but what it hid of the image is not listed as deleted: a restore shows those
// files again (checkpointctl's format has no way to say "opaque" besides listing each one).
#include "checkpoint_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "berth/file_text.h"
#include "berth/open_beneath.h"
#include "berth/unique_fd.h"
#include "layer_unpack.h"

namespace berth {

namespace {

struct ArchiveFree {
  bool write;
  void operator()(archive* a) const { write ? archive_write_free(a) : archive_read_free(a); }
};
using ArchivePtr = std::unique_ptr<archive, ArchiveFree>;

constexpr size_t kMaxPath = 4096;
constexpr uint64_t kMaxEntries = 1u << 20;

std::vector<std::string> sorted_names(int dir_fd) {
  std::vector<std::string> names;
  int fd = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return names;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return names;
  }
  while (dirent* e = ::readdir(d))
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

Status write_failed(archive* a, const std::string& what) {
  int e = archive_errno(a);
  return Status(e == ENOSPC || e == EDQUOT ? Code::resource_exhausted : Code::internal,
                what + ": " + (archive_error_string(a) ? archive_error_string(a) : "unknown error"));
}

Status copy_file_data(archive* out, int fd, const std::string& what) {
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_status(errno, "read " + what);
    if (n == 0) return ok_status();
    if (archive_write_data(out, buf, static_cast<size_t>(n)) != n) return write_failed(out, "write " + what);
  }
}

// One directory's entries into the tar, depth first; `rel` is the directory's path in the tar
// ("" for the root). `whiteouts` (the rootfs diff) collects 0:0 character devices instead of
// writing them; without it, only directories and regular files are allowed.
Status add_tree(archive* out, int dir_fd, const std::string& rel, std::vector<std::string>* whiteouts,
                uint64_t* entries) {
  for (const std::string& name : sorted_names(dir_fd)) {
    const std::string path = rel.empty() ? name : rel + "/" + name;
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno_status(errno, "stat " + path);
    if (whiteouts && S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0)) {
      whiteouts->push_back("/" + path);
      continue;
    }
    bool plain = S_ISDIR(st.st_mode) || S_ISREG(st.st_mode);
    if (!plain && !whiteouts) return invalid_argument(path + " is neither a directory nor a regular file");
    std::unique_ptr<archive_entry, decltype(&archive_entry_free)> e(archive_entry_new(), archive_entry_free);
    archive_entry_copy_pathname(e.get(), path.c_str());
    archive_entry_copy_stat(e.get(), &st);
    if (!whiteouts) {  // a checkpoint's own files: no owner of the node's to carry
      archive_entry_set_uid(e.get(), 0);
      archive_entry_set_gid(e.get(), 0);
    }
    UniqueFd fd;
    if (S_ISLNK(st.st_mode)) {
      char target[kMaxPath];
      ssize_t n = ::readlinkat(dir_fd, name.c_str(), target, sizeof target - 1);
      if (n < 0) return errno_status(errno, "readlink " + path);
      target[n] = 0;
      archive_entry_copy_symlink(e.get(), target);
    } else if (S_ISREG(st.st_mode)) {
      fd = UniqueFd(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
      if (!fd) return errno_status(errno, "open " + path);
    } else if (!S_ISDIR(st.st_mode)) {
      archive_entry_set_size(e.get(), 0);
    }
    if (archive_write_header(out, e.get()) != ARCHIVE_OK) return write_failed(out, "add " + path);
    if (++*entries > kMaxEntries)
      return Status(Code::resource_exhausted, "more than " + std::to_string(kMaxEntries) + " entries");
    if (fd)
      if (Status s = copy_file_data(out, fd.get(), path); !s.ok()) return s;
    if (S_ISDIR(st.st_mode)) {
      UniqueFd sub(::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!sub) return errno_status(errno, "open " + path);
      if (Status s = add_tree(out, sub.get(), path, whiteouts, entries); !s.ok()) return s;
    }
  }
  return ok_status();
}

Result<uint64_t> write_tar(const std::string& dir, const std::string& out_path, std::vector<std::string>* whiteouts) {
  UniqueFd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root) return errno_status(errno, "open " + dir);
  UniqueFd out_fd(::open(out_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!out_fd) return errno_status(errno, "create " + out_path);
  ArchivePtr out(archive_write_new(), ArchiveFree{true});
  archive_write_set_format_pax_restricted(out.get());
  archive_write_add_filter_none(out.get());
  if (archive_write_open_fd(out.get(), out_fd.get()) != ARCHIVE_OK) return write_failed(out.get(), "open " + out_path);
  uint64_t entries = 0;
  if (Status s = add_tree(out.get(), root.get(), "", whiteouts, &entries); !s.ok()) return s.context("archive " + dir);
  if (archive_write_close(out.get()) != ARCHIVE_OK) return write_failed(out.get(), "close " + out_path);
  if (::fsync(out_fd.get()) != 0) return errno_status(errno, "fsync " + out_path);
  return entries;
}

// "./a//b" -> "a/b"; nullopt for an empty path, "..", or a path longer than kMaxPath.
std::optional<std::string> relative_entry_path(const std::string& raw) {
  if (raw.empty() || raw.size() > kMaxPath || raw.front() == '/') return std::nullopt;
  std::string out;
  size_t i = 0;
  while (i <= raw.size()) {
    size_t j = raw.find('/', i);
    std::string comp = raw.substr(i, j == std::string::npos ? std::string::npos : j - i);
    if (comp == "..") return std::nullopt;
    if (!comp.empty() && comp != ".") out += (out.empty() ? "" : "/") + comp;
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return out;
}

}  // namespace

Status pack_checkpoint_archive(const std::string& dir, const std::string& out) {
  auto n = write_tar(dir, out, nullptr);
  return n.ok() ? ok_status() : n.status();
}

Result<RootfsDiff> write_rootfs_diff(const std::string& upper, const std::string& out_tar) {
  RootfsDiff diff;
  auto n = write_tar(upper, out_tar, &diff.deleted);
  if (!n.ok()) return n.status();
  diff.entries = *n;
  return diff;
}

Status unpack_checkpoint_archive(const std::string& archive_path, const std::string& dest, uint64_t max_bytes) {
  ArchivePtr in(archive_read_new(), ArchiveFree{false});
  archive_read_support_format_tar(in.get());
  archive_read_support_format_gnutar(in.get());
  uint64_t bytes = 0, entries = 0;
  auto refuse = [&](const std::string& why) {
    return invalid_argument("checkpoint archive " + archive_path + ": " + why + "; archive refused");
  };
  if (archive_read_open_filename(in.get(), archive_path.c_str(), 1 << 16) != ARCHIVE_OK)
    return refuse(std::string("not a tar: ") + archive_error_string(in.get()));
  for (;;) {
    archive_entry* e = nullptr;
    int r = archive_read_next_header(in.get(), &e);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) return refuse(std::string("not a tar: ") + archive_error_string(in.get()));
    if (++entries > kMaxEntries) return refuse("more than " + std::to_string(kMaxEntries) + " entries");
    std::string raw = archive_entry_pathname(e) ? archive_entry_pathname(e) : "";
    auto rel = relative_entry_path(raw);
    if (!rel) return refuse("entry '" + raw + "' is absolute, climbs with '..' or is too long");
    if (rel->empty()) continue;
    if (archive_entry_hardlink(e)) return refuse("entry '" + raw + "' is a hard link");
    mode_t type = archive_entry_filetype(e);
    // Directories come with the files below them (made 0755 inside the 0700 destination).
    if (type == AE_IFDIR) continue;
    if (type != AE_IFREG) return refuse("entry '" + raw + "' is neither a directory nor a regular file");
    int64_t size = archive_entry_size(e);
    if (size < 0 || static_cast<uint64_t>(size) > max_bytes - std::min(bytes, max_bytes))
      return refuse("more than " + std::to_string(max_bytes) + " bytes");
    int fd = open_beneath(dest.c_str(), rel->c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) return refuse("file '" + raw + "': " + strerror(-fd));
    UniqueFd file(fd);
    const void* buf;
    size_t n;
    la_int64_t offset;
    uint64_t written = 0;
    while ((r = archive_read_data_block(in.get(), &buf, &n, &offset)) == ARCHIVE_OK) {
      if (offset < 0 || static_cast<uint64_t>(offset) + n > static_cast<uint64_t>(size))
        return refuse("file '" + raw + "' holds more than its size");
      if (::pwrite(file.get(), buf, n, offset) != static_cast<ssize_t>(n))
        return errno_status(errno, "write " + dest + "/" + *rel,
                            errno == ENOSPC ? Code::resource_exhausted : Code::internal);
      written = std::max<uint64_t>(written, static_cast<uint64_t>(offset) + n);
    }
    if (r < ARCHIVE_WARN) return refuse("file '" + raw + "': " + archive_error_string(in.get()));
    if (::ftruncate(file.get(), size) != 0) return errno_status(errno, "size " + dest + "/" + *rel);
    bytes += static_cast<uint64_t>(size);
  }
  return ok_status();
}

Result<std::vector<std::string>> parse_deleted_files(const std::string& json_text) {
  auto j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_array()) return invalid_argument("deleted.files: not a JSON array");
  std::vector<std::string> out;
  for (const auto& v : j) {
    if (!v.is_string()) return invalid_argument("deleted.files: an entry is not a string");
    const std::string& p = v.get_ref<const std::string&>();
    if (p.empty() || p.front() != '/') return invalid_argument("deleted.files: '" + p + "' is not absolute");
    auto rel = relative_entry_path(p.substr(1));
    if (!rel || rel->empty())
      return invalid_argument("deleted.files: '" + p + "' is the root, climbs with '..' or is too long");
    out.push_back(*rel);
  }
  return out;
}

Status apply_rootfs_diff(const std::string& diff_tar, const std::string& deleted_json, const std::string& upper) {
  if (!diff_tar.empty())
    if (Status s = unpack_layer(diff_tar, upper, "rootfs-diff.tar"); !s.ok()) return s;
  if (deleted_json.empty()) return ok_status();
  auto text = read_file_bytes(deleted_json);
  if (!text.ok()) return text.status();
  auto paths = parse_deleted_files(*text);
  if (!paths.ok()) return paths.status();
  for (const std::string& rel : *paths)
    if (Status s = make_overlay_whiteout(upper, rel); !s.ok()) return s.context("deleted.files: /" + rel);
  return ok_status();
}

}  // namespace berth
