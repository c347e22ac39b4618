// PullWorker; see pull_worker.h. The connection is a socketpair (the helper's stdin), so a write
// to a helper that died is EPIPE without a SIGPIPE (MSG_NOSIGNAL), and replies are read with poll
// in 200 ms slices between which the pull's stop is asked.
#include "pull_worker.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <spdlog/spdlog.h>

#include "berth/process_identity.h"
#include "berth/spawn.h"
#include "sha256.h"

namespace berth {

namespace proto = pull_protocol;

namespace {

constexpr int kStepPollMs = 200;
constexpr int kExitGraceMs = 5000;

std::string describe_wait_status(int ws) {
  if (WIFEXITED(ws)) return "exit status " + std::to_string(WEXITSTATUS(ws));
  if (WIFSIGNALED(ws)) return "killed by signal " + std::to_string(WTERMSIG(ws));
  return "ended";
}

Status send_all(int fd, const std::string& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_status(errno, "write to berth-pull");
    }
    off += static_cast<size_t>(n);
  }
  return ok_status();
}

}  // namespace

Result<std::unique_ptr<PullWorker>> PullWorker::start(const std::string& binary, const proto::Hello& hello) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return errno_status(errno, "start berth-pull: socketpair");
  UniqueFd mine(sv[0]), theirs(sv[1]);
  // stdout is stderr too: the protocol has the socket to itself, whatever the helper prints.
  auto pid =
      spawn_process({.argv = {binary}, .stdio = {theirs.get(), STDERR_FILENO, STDERR_FILENO}, .die_with_parent = true});
  if (!pid.ok()) return pid.status().context("start " + binary);
  theirs.reset();
  std::unique_ptr<PullWorker> w(new PullWorker(*pid, std::move(mine), hello.store));
  if (Status s = send_all(w->sock_.get(), proto::frame(proto::encode_hello(hello))); !s.ok()) {
    std::string how = w->end(true);
    return Status(Code::internal, "start " + binary + ": " + s.message() + " (" + how + ")");
  }
  return w;
}

PullWorker::PullWorker(pid_t pid, UniqueFd sock, std::string store)
    : pid_(pid), sock_(std::move(sock)), store_(std::move(store)) {}

Status PullWorker::begin(const std::string& reference, const RegistryCredentials& creds,
                         std::function<void(size_t)> on_bytes, PullStopCheck stop) {
  on_bytes_ = std::move(on_bytes);
  stop_ = std::move(stop);
  auto r =
      call({.op = proto::Request::Op::begin, .reference = reference, .credentials = creds, .what = reference}, nullptr);
  if (!r.ok()) return r.status();
  return r->status;
}

bool PullWorker::went_away() const {
  if (reaped_) return true;
  pollfd p{sock_.get(), POLLIN | POLLRDHUP, 0};
  return ::poll(&p, 1, 0) != 0;
}

Status PullWorker::end_pull() {
  on_bytes_ = nullptr;
  // Its steps are done, so the answer is immediate; a helper that does not give it is ended.
  stop_ = [deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kExitGraceMs)] {
    return std::chrono::steady_clock::now() < deadline
               ? ok_status()
               : Status(Code::deadline_exceeded, "berth-pull did not answer the end of its pull");
  };
  auto r = call({.op = proto::Request::Op::end}, nullptr);
  Status s = r.ok() ? r->status : r.status();
  // Nothing is in flight between pulls: a temp file of the helper's is a transfer it gave up.
  if (s.ok()) BlobStore::attach(store_, "")->remove_temp_files("p" + std::to_string(pid_));
  return s;
}

PullWorker::~PullWorker() {
  if (!reaped_) {
    sock_.reset();  // EOF: the helper ends its loop and exits
    end(false);
  }
}

std::string PullWorker::end(bool kill_it) {
  if (reaped_) return "ended";
  sock_.reset();
  if (kill_it) {
    ::kill(pid_, SIGKILL);  // not reaped yet: the pid is still this child's
  } else if (UniqueFd pidfd = open_pidfd(pid_)) {
    pollfd p{pidfd.get(), POLLIN, 0};
    int r;
    while ((r = ::poll(&p, 1, kExitGraceMs)) < 0 && errno == EINTR) {
    }
    if (r == 0) {
      spdlog::warn("images: berth-pull {} did not exit within {} ms of its last request; killing it", pid_,
                   kExitGraceMs);
      ::kill(pid_, SIGKILL);
    }
  }
  int ws = 0;
  while (::waitpid(pid_, &ws, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  BlobStore::attach(store_, "")->remove_temp_files("p" + std::to_string(pid_));
  return describe_wait_status(ws);
}

Result<std::string> PullWorker::next_frame() {
  for (;;) {
    auto f = proto::take_frame(buffer_);
    if (!f.ok()) {
      end(true);
      return f.status();
    }
    if (*f) return std::move(**f);
    pollfd p{sock_.get(), POLLIN, 0};
    int r = ::poll(&p, 1, kStepPollMs);
    if (r < 0 && errno != EINTR) return errno_status(errno, "berth-pull: poll");
    if (stop_)
      if (Status s = stop_(); !s.ok()) {
        end(true);
        return s;
      }
    if (r <= 0) continue;
    char chunk[65536];
    ssize_t n = ::recv(sock_.get(), chunk, sizeof chunk, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      pid_t pid = pid_;
      std::string how = end(true);
      return Status(Code::internal, "berth-pull (pid " + std::to_string(pid) + ") ended before it answered: " + how);
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

Result<proto::Reply> PullWorker::call(const proto::Request& request, std::string* body) {
  if (reaped_) return internal_error("berth-pull " + std::to_string(pid_) + " is gone");
  if (Status s = send_all(sock_.get(), proto::frame(proto::encode_request(request))); !s.ok()) {
    std::string how = end(true);
    return Status(Code::internal, s.message() + " (berth-pull " + how + ")");
  }
  auto payload = next_frame();
  if (!payload.ok()) return payload.status();
  auto reply = proto::decode_reply(*payload);
  if (!reply.ok()) {
    end(true);
    return reply.status();
  }
  if (on_bytes_ && reply->registry_bytes > 0) on_bytes_(static_cast<size_t>(reply->registry_bytes));
  if (reply->status.ok() && body) {
    auto b = next_frame();
    if (!b.ok()) return b.status();
    *body = std::move(*b);
  }
  return reply;
}

Result<FetchedManifest> PullWorker::get_manifest(const std::string& tag_or_digest) {
  FetchedManifest m;
  auto r =
      call({.op = proto::Request::Op::manifest, .ref = tag_or_digest, .what = "manifest " + tag_or_digest}, &m.body);
  if (!r.ok()) return r.status();
  if (!r->status.ok()) return r->status;
  // Hashed here, not taken from the helper: the digest is what the store and the index trust.
  m.media_type = r->media_type;
  m.digest = Sha256::of(m.body);
  if (tag_or_digest.rfind("sha256:", 0) == 0 && m.digest != tag_or_digest)
    return internal_error("manifest " + tag_or_digest + ": digest mismatch: content hashes to " + m.digest);
  return m;
}

Status PullWorker::fetch_blob(const Descriptor& d, const std::string& what) {
  auto r = call({.op = proto::Request::Op::blob, .digest = d.digest, .size = d.size, .what = what}, nullptr);
  if (!r.ok()) return r.status().context(what);
  return r->status;
}

void PullWorker::prefetch(const Descriptor& d) {
  // Only a hint: a helper that failed it fetches the blob when asked, and one that is gone fails
  // the next request.
  auto r = call({.op = proto::Request::Op::prefetch, .digest = d.digest, .size = d.size, .what = "blob " + d.digest},
                nullptr);
  if (r.ok() && !r->status.ok()) spdlog::debug("images: prefetch of {}: {}", d.digest, r->status.message());
}

Status PullWorker::unpack(const std::string& blob_path, const std::string& dest, const std::string& what) {
  auto r = call({.op = proto::Request::Op::unpack, .blob_path = blob_path, .dest = dest, .what = what}, nullptr);
  if (!r.ok()) return r.status().context(what);
  return r->status;
}

}  // namespace berth
