// Blobs live at blobs/sha256/<hex>; writes go to tmp/<hex>.<random> first (same filesystem, so
// the final rename is atomic).
#include "blob_store.h"

#include <dirent.h>
#include <fcntl.h>
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
  for (const std::string& d : {dir, dir + "/blobs", dir + "/blobs/sha256", dir + "/tmp"})
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
  if (!done_ && !temp_.empty()) ::unlink(temp_.c_str());
}

Status BlobStore::Writer::write(const void* data, size_t len) {
  if (expected_size_ >= 0 && written_ + len > static_cast<uint64_t>(expected_size_))
    return internal_error("blob " + digest_ + ": more than the expected " + std::to_string(expected_size_) + " bytes");
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
  return ok_status();
}

Status BlobStore::Writer::commit() {
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

Result<std::unique_ptr<BlobStore::Writer>> BlobStore::begin(const std::string& digest, int64_t expected_size) {
  if (!is_sha256_digest(digest)) return invalid_argument("blob digest '" + digest + "' is not a sha256 digest");
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
