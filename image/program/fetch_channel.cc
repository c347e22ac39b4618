// See fetch_channel.h.
#include "fetch_channel.h"

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>

#include "berth/image_reference.h"

#include "frame_io.h"
#include "pull_steps.h"
#include "layer_unpack.h"
#include "pull_worker_protocol.h"
#include "registry_client.h"
#include "registry_connections.h"
#include "sha256.h"

namespace berth::pull_fetch {
namespace {

namespace proto = pull_protocol;

bool send_tagged(int fd, char tag, const char* data, size_t n) {
  std::string payload;
  payload.reserve(n + 1);
  payload.push_back(tag);
  payload.append(data, n);
  return proto::send_frame(fd, payload);
}

bool send_reply(int fd, const proto::Reply& reply) {
  std::string r = proto::encode_reply(reply);
  return send_tagged(fd, 'R', r.data(), r.size());
}

const Status kFetcherGone(Code::internal, "berth-pull: its fetcher ended");

// One small blob downloaded on a thread of its own beside the requests that follow its prefetch
// (over another of the share's connections), and held until its blob request takes it.
class PrefetchedBlob {
 public:
  // Throws std::system_error when no thread can be started.
  PrefetchedBlob(RegistryClient& client, std::string digest, int64_t size) : digest_(std::move(digest)) {
    thread_ = std::thread([this, &client, size] {
      status_ = client.get_blob(digest_, [this, size](const char* data, size_t n) {
        if (bytes_.size() + n > static_cast<uint64_t>(size)) return internal_error("more bytes than its size");
        bytes_.append(data, n);
        return ok_status();
      });
    });
  }
  ~PrefetchedBlob() {
    if (thread_.joinable()) thread_.join();
  }
  PrefetchedBlob(const PrefetchedBlob&) = delete;
  PrefetchedBlob& operator=(const PrefetchedBlob&) = delete;

  const std::string& digest() const { return digest_; }
  // Waits for the download: the bytes (verified by the helper, as any blob's), or why there are none.
  Result<std::string> take() {
    thread_.join();
    if (!status_.ok()) return status_;
    return std::move(bytes_);
  }

 private:
  std::string digest_;
  std::string bytes_;
  Status status_;
  std::thread thread_;
};

class FetcherLink final : public FetchedPullSteps {
 public:
  FetcherLink(int fd, BlobStore& blobs, std::atomic<uint64_t>& received)
      : fd_(fd), blobs_(blobs), received_(received) {}

  Status begin(const std::string& reference, const RegistryCredentials& creds) override {
    return call({.op = proto::Request::Op::begin, .reference = reference, .credentials = creds});
  }

  Status end() override { return call({.op = proto::Request::Op::end}); }

  Result<FetchedManifest> get_manifest(const std::string& tag_or_digest) override {
    if (!ask({.op = proto::Request::Op::manifest, .ref = tag_or_digest, .what = "manifest " + tag_or_digest}))
      return kFetcherGone;
    auto reply = next('R');
    if (!reply.ok()) return reply.status();
    auto decoded = proto::decode_reply(*reply);
    if (!decoded.ok()) return decoded.status();
    if (!decoded->status.ok()) return decoded->status;
    auto body = next('B');
    if (!body.ok()) return body.status();
    received_ += body->size();
    // Hashed here: what the fetcher says of it is not what the store trusts.
    FetchedManifest m{std::move(*body), decoded->media_type, ""};
    m.digest = Sha256::of(m.body);
    if (tag_or_digest.rfind("sha256:", 0) == 0 && m.digest != tag_or_digest)
      return internal_error("manifest " + tag_or_digest + ": digest mismatch: content hashes to " + m.digest);
    return m;
  }

  Status fetch_blob(const Descriptor& d, const std::string& what) override {
    return fetch_blob_resuming(blobs_, d, what, [this, &d](BlobStore::Writer& w) { return stream_into(w, d); });
  }

  void prefetch(const Descriptor& d) override {
    (void)call({.op = proto::Request::Op::prefetch, .digest = d.digest, .size = d.size, .what = "blob " + d.digest});
  }

  Status unpack(const std::string& blob_path, const std::string& dest, const std::string& what) override {
    return unpack_layer(blob_path, dest, what, /*from_inside=*/true);
  }

 private:
  bool ask(const proto::Request& request) { return proto::send_frame(fd_, proto::encode_request(request)); }

  // A request whose answer is a reply alone.
  Status call(const proto::Request& request) {
    if (!ask(request)) return kFetcherGone;
    auto reply = next('R');
    if (!reply.ok()) return reply.status();
    auto decoded = proto::decode_reply(*reply);
    return decoded.ok() ? decoded->status : decoded.status();
  }

  // The next frame, which must carry `tag`; its bytes after the tag.
  Result<std::string> next(char tag) {
    auto f = proto::read_frame(fd_, buffer_);
    if (!f) return kFetcherGone;
    if (f->empty() || (*f)[0] != tag)
      return internal_error(std::string("berth-pull: its fetcher sent no '") + tag + "' frame");
    return f->substr(1);
  }

  // The blob's data frames into `w` up to the fetcher's reply, which is returned. A write that
  // fails (a full disk) is the answer once the reply came, so the two sides stay in step.
  Status stream_into(BlobStore::Writer& w, const Descriptor& d) {
    if (!ask({.op = proto::Request::Op::blob,
              .digest = d.digest,
              .size = d.size,
              .offset = w.written(),
              .what = "blob " + d.digest}))
      return kFetcherGone;
    Status written;
    for (;;) {
      auto f = proto::read_frame(fd_, buffer_);
      if (!f || f->empty()) return kFetcherGone;
      if ((*f)[0] == 'D') {
        received_ += f->size() - 1;
        if (written.ok()) written = w.write(f->data() + 1, f->size() - 1);
        continue;
      }
      if ((*f)[0] == 'Z') {
        if (written.ok()) written = w.restart();
        continue;
      }
      if ((*f)[0] != 'R') return internal_error("berth-pull: its fetcher sent an unknown frame");
      auto reply = proto::decode_reply(f->substr(1));
      if (!reply.ok()) return reply.status();
      return reply->status.ok() ? written : reply->status;
    }
  }

  int fd_;
  BlobStore& blobs_;
  std::atomic<uint64_t>& received_;
  std::string buffer_;
};

}  // namespace

int serve_fetcher(int fd, const RegistryOptions& registry) {
  // A transfer under way stops once the helper is gone (its end of the socket hung up), and a
  // prefetch still under way when its pull ends is abandoned (no other transfer runs then).
  std::atomic<bool> abandon{false};
  auto helper_gone = [fd, &abandon]() -> Status {
    if (abandon) return Status(Code::cancelled, "berth-pull: the pull ended");
    pollfd p{fd, POLLRDHUP, 0};
    if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) return kFetcherGone;
    return ok_status();
  };
  // Without a share (curl could not make one) every request connects anew, as it would anyway.
  auto made = RegistryConnections::make();
  std::shared_ptr<RegistryConnections> connections = made.ok() ? *made : nullptr;
  std::unique_ptr<RegistryClient> client;      // the pull begun, with its credentials
  std::unique_ptr<PrefetchedBlob> prefetched;  // of that pull; ends before its client
  auto drop_prefetched = [&] {
    abandon = true;
    prefetched.reset();
    abandon = false;
  };
  const Status kNoPull(Code::internal, "berth-pull: a request of no pull (no begin before it)");
  std::string buffer;
  while (auto payload = proto::read_frame(fd, buffer)) {
    auto req = proto::decode_request(*payload);
    proto::Reply reply;
    if (!req.ok()) {
      reply.status = req.status();
    } else if (req->op == proto::Request::Op::begin) {
      drop_prefetched();
      client.reset();
      auto ref = parse_image_reference(req->reference);
      if (ref.ok())
        client = std::make_unique<RegistryClient>(registry, std::move(*ref), std::move(req->credentials), helper_gone,
                                                  connections);
      else
        reply.status = ref.status();
    } else if (req->op == proto::Request::Op::end) {
      drop_prefetched();
      client.reset();
    } else if (!client) {
      reply.status = kNoPull;
    } else if (req->op == proto::Request::Op::manifest) {
      auto m = client->get_manifest(req->ref);
      if (m.ok()) {
        reply.media_type = m->media_type;
        if (!send_reply(fd, reply) || !send_tagged(fd, 'B', m->body.data(), m->body.size())) return 1;
        continue;
      }
      reply.status = m.status();
    } else if (req->op == proto::Request::Op::prefetch) {
      drop_prefetched();
      try {
        prefetched = std::make_unique<PrefetchedBlob>(*client, req->digest, req->size);
      } catch (const std::system_error& e) {
        reply.status = internal_error(std::string("berth-pull: no thread for a prefetch: ") + e.what());
      }
    } else if (req->op == proto::Request::Op::blob) {
      // A prefetch that failed leaves the blob to be fetched as it would have been without one.
      Result<std::string> early = Status(Code::not_found, "not prefetched");
      if (prefetched && prefetched->digest() == req->digest && req->offset == 0) {
        early = prefetched->take();
        prefetched.reset();
      }
      if (early.ok()) {
        for (size_t at = 0; at < early->size(); at += 1 << 16)
          if (!send_tagged(fd, 'D', early->data() + at, std::min<size_t>(1 << 16, early->size() - at))) return 1;
      } else {
        reply.status = client->get_blob(
            req->digest,
            [fd](const char* data, size_t n) { return send_tagged(fd, 'D', data, n) ? ok_status() : kFetcherGone; },
            req->offset, [fd] { return send_tagged(fd, 'Z', "", 0) ? ok_status() : kFetcherGone; });
      }
    } else {
      reply.status = internal_error("berth-pull: the fetcher does not unpack");
    }
    if (!send_reply(fd, reply)) return 1;
  }
  return 0;
}

int refuse_requests(int fd, const Status& why) {
  std::string buffer;
  while (proto::read_frame(fd, buffer)) {
    proto::Reply reply;
    reply.status = why;
    if (!send_reply(fd, reply)) return 1;
  }
  return 1;
}

std::unique_ptr<FetchedPullSteps> fetched_pull_steps(int fd, BlobStore& blobs, std::atomic<uint64_t>& received) {
  return std::make_unique<FetcherLink>(fd, blobs, received);
}

}  // namespace berth::pull_fetch
