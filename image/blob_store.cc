// Blobs live at blobs/sha256/<hex>; writes go to tmp/<hex>.<random> first, resumable ones to
// partial/<hex> (same filesystem, so the final rename is atomic). A partial is flock'ed by its
// writer: a second pull of the same layer never appends to it at the same time. Its hash is taken
// again from its bytes when it is resumed, so a partial cut anywhere (a killed helper) is sound.
#include "blob_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <spdlog/spdlog.h>

#include "berth/image_reference.h"

namespace berth {

static Status make_dir(const std::string& p) {
  if (::mkdir(p.c_str(), 0700) != 0 && errno != EEXIST) return errno_status(errno, "mkdir " + p);
  return ok_status();
}

Result<std::unique_ptr<BlobStore>> BlobStore::open(const std::string& dir) {
  for (const std::string& d : {dir, dir + "/blobs", dir + "/blobs/sha256", dir + "/tmp", dir + "/partial"})
    if (Status s = make_dir(d); !s.ok()) return s.context("open blob store");
  if (DIR* d = ::opendir((dir + "/tmp").c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.' && ::unlinkat(::dirfd(d), e->d_name, 0) == 0)
        spdlog::info("images: removed {}/tmp/{}, a blob download cut short", dir, e->d_name);
    ::closedir(d);
  }
  return std::unique_ptr<BlobStore>(new BlobStore(dir));
}

std::unique_ptr<BlobStore> BlobStore::attach(const std::string& dir, std::string temp_tag) {
  return std::unique_ptr<BlobStore>(new BlobStore(dir, std::move(temp_tag)));
}

void BlobStore::remove_temp_files(const std::string& temp_tag) const {
  const std::string marker = "." + temp_tag + ".";
  if (DIR* d = ::opendir((dir_ + "/tmp").c_str())) {
    while (dirent* e = ::readdir(d))
      if (std::string(e->d_name).find(marker) != std::string::npos) ::unlinkat(::dirfd(d), e->d_name, 0);
    ::closedir(d);
  }
}

std::string BlobStore::path(const std::string& digest) const { return dir_ + "/blobs/sha256/" + digest.substr(7); }

bool BlobStore::has(const std::string& digest) const {
  struct stat st {};
  return is_sha256_digest(digest) && ::stat(path(digest).c_str(), &st) == 0;
}

Result<std::string> BlobStore::read(const std::string& digest, size_t max_size) const {
  UniqueFd fd(::open(path(digest).c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return errno_status(errno, "read blob " + digest, errno == ENOENT ? Code::not_found : Code::internal);
  std::string out;
  char buf[65536];
  for (ssize_t n; (n = ::read(fd.get(), buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_status(errno, "read blob " + digest);
    }
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_size)
      return internal_error("blob " + digest + " is larger than " + std::to_string(max_size) + " bytes");
  }
  return out;
}

bool BlobStore::looks_like_document(const std::string& digest, size_t max_size) const {
  UniqueFd fd(::open(path(digest).c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || st.st_size <= 0 || static_cast<uint64_t>(st.st_size) > max_size)
    return false;
  char head[64];
  ssize_t n = ::pread(fd.get(), head, sizeof head, 0);
  for (ssize_t i = 0; i < n; ++i) {
    if (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n') continue;
    return head[i] == '{';
  }
  return false;
}

BlobStore::Writer::Writer(std::string temp, UniqueFd fd, std::string final_path, std::string digest, int64_t size)
    : temp_(std::move(temp)),
      final_(std::move(final_path)),
      digest_(std::move(digest)),
      fd_(std::move(fd)),
      expected_size_(size),
      hash_(std::make_unique<Sha256>()) {}

BlobStore::Writer::~Writer() {
  if (!done_ && !temp_.empty() && !keep_on_failure_) ::unlink(temp_.c_str());
}

Status BlobStore::Writer::restart() {
  if (::ftruncate(fd_.get(), 0) != 0 || ::lseek(fd_.get(), 0, SEEK_SET) != 0)
    return errno_status(errno, "restart blob " + digest_ + " at " + temp_);
  hash_ = std::make_unique<Sha256>();
  written_ = resumed_from_ = written_back_ = 0;
  return ok_status();
}

Status BlobStore::Writer::write(const void* data, size_t len) {
  if (expected_size_ >= 0 && written_ + len > static_cast<uint64_t>(expected_size_)) {
    keep_on_failure_ = false;
    return internal_error("blob " + digest_ + ": more than the expected " + std::to_string(expected_size_) + " bytes");
  }
  const char* p = static_cast<const char*>(data);
  size_t left = len;
  while (left > 0) {
    ssize_t n = ::write(fd_.get(), p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_status(errno, "write blob " + digest_ + " to " + temp_);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  hash_->update(data, len);
  written_ += len;
  // Write-behind: the disk takes the blob while the rest of it arrives, so commit's fsync waits for
  // the last stretch and the journal, not the whole blob (a 1 MiB layer's fsync took 4-6 ms).
  // Only a hint: sync_file_range starts writeback without waiting for it; failures are ignored
  // since commit's fsync is what answers for the bytes.
  constexpr uint64_t kWriteBehind = 256 << 10;
  if (written_ - written_back_ >= kWriteBehind) {
    ::sync_file_range(fd_.get(), static_cast<off_t>(written_back_), static_cast<off_t>(written_ - written_back_),
                      SYNC_FILE_RANGE_WRITE);
    written_back_ = written_;
  }
  return ok_status();
}

Status BlobStore::Writer::commit() {
  // Whatever fails here, the bytes are known wrong or short of a whole blob that was delivered:
  // nothing to continue from.
  keep_on_failure_ = false;
  if (expected_size_ >= 0 && written_ != static_cast<uint64_t>(expected_size_))
    return internal_error("blob " + digest_ + ": size mismatch: got " + std::to_string(written_) + " bytes, expected " +
                          std::to_string(expected_size_));
  std::string got = hash_->digest();
  if (got != digest_) return internal_error("blob " + digest_ + ": digest mismatch: content hashes to " + got);
  if (::fsync(fd_.get()) != 0) return errno_status(errno, "fsync blob " + digest_ + " at " + temp_);
  fd_.reset();
  if (::rename(temp_.c_str(), final_.c_str()) != 0) return errno_status(errno, "store blob " + digest_);
  done_ = true;
  return ok_status();
}

std::string BlobStore::partial_path(const std::string& digest) const { return dir_ + "/partial/" + digest.substr(7); }

// The partial download of `digest`, locked for this writer and hashed up to its end; nullptr when
// another writer holds it or it cannot be opened (the write goes to a temp file then).
std::unique_ptr<BlobStore::Writer> BlobStore::resume_partial(const std::string& digest, int64_t expected_size) const {
  const std::string partial = partial_path(digest);
  UniqueFd fd(::open(partial.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return nullptr;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return nullptr;
  uint64_t have = static_cast<uint64_t>(st.st_size);
  // A whole one would have been committed: start over.
  if (have >= static_cast<uint64_t>(expected_size)) have = 0;
  auto w = std::make_unique<Writer>(partial, std::move(fd), path(digest), digest, expected_size);
  char buf[1 << 16];
  uint64_t at = 0;
  while (at < have) {
    ssize_t n = ::pread(w->fd_.get(), buf, std::min<uint64_t>(sizeof buf, have - at), static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    w->hash_->update(buf, static_cast<size_t>(n));
    at += static_cast<uint64_t>(n);
  }
  if (::ftruncate(w->fd_.get(), static_cast<off_t>(at)) != 0 ||
      ::lseek(w->fd_.get(), static_cast<off_t>(at), SEEK_SET) < 0)
    return nullptr;
  w->written_ = w->resumed_from_ = w->written_back_ = at;
  w->keep_on_failure_ = true;
  // Its age is that of its last byte: garbage collection keeps recent ones.
  ::futimens(w->fd_.get(), nullptr);
  return w;
}

std::vector<BlobStore::Partial> BlobStore::partials() const {
  std::vector<Partial> out;
  if (DIR* d = ::opendir((dir_ + "/partial").c_str())) {
    while (dirent* e = ::readdir(d)) {
      struct stat st {};
      if (e->d_name[0] == '.' || ::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      std::string digest = std::string("sha256:") + e->d_name;
      if (is_sha256_digest(digest))
        out.push_back({digest, static_cast<uint64_t>(st.st_size), static_cast<int64_t>(st.st_mtim.tv_sec)});
    }
    ::closedir(d);
  }
  return out;
}

Result<std::unique_ptr<BlobStore::Writer>> BlobStore::begin(const std::string& digest, int64_t expected_size,
                                                            bool resumable) {
  if (!is_sha256_digest(digest)) return invalid_argument("blob digest '" + digest + "' is not a sha256 digest");
  if (resumable && expected_size > 0)
    if (auto w = resume_partial(digest, expected_size)) return w;
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string temp =
      dir_ + "/tmp/" + digest.substr(7) + "." + (temp_tag_.empty() ? "" : temp_tag_ + ".") + std::to_string(rng());
  UniqueFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd) return errno_status(errno, "create " + temp + " for blob " + digest);
  return std::make_unique<Writer>(temp, std::move(fd), path(digest), digest, expected_size);
}

Status BlobStore::put(const std::string& digest, const std::string& content) {
  auto w = begin(digest, static_cast<int64_t>(content.size()));
  if (!w.ok()) return w.status();
  if (Status s = (*w)->write(content.data(), content.size()); !s.ok()) return s;
  return (*w)->commit();
}

Status BlobStore::remove(const std::string& digest) {
  if (::unlink(path(digest).c_str()) != 0 && errno != ENOENT) return errno_status(errno, "remove blob " + digest);
  return ok_status();
}

std::vector<std::string> BlobStore::list() const {
  std::vector<std::string> out;
  if (DIR* d = ::opendir((dir_ + "/blobs/sha256").c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') out.push_back(std::string("sha256:") + e->d_name);
    ::closedir(d);
  }
  return out;
}

}  // namespace berth
