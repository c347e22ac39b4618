// The signature policy at a pull: the rule for the reference's scope, and for signedBy the cosign
// signature manifest beside the image (sha256-<hex>.sig, through the pull's own registry steps, so
// mirrors, credentials and the berth-pull helper's confinement apply) and its payloads, stored as
// blobs under the pull's lease only: garbage collection takes them once the pull is done.
#include "base64_bytes.h"
#include "image_store_state.h"

namespace berth {

namespace {
constexpr int64_t kMaxPayloadBytes = 64 << 10;  // a simple-signing payload is a few hundred bytes
}

Result<std::string> ImageManager::Impl::check_signatures(PullSteps& steps, const ImageReference& ref,
                                                         const std::string& digest, PullLease& lease) {
  if (!opt.signature_policy) return std::string();
  const SignaturePolicy::Requirement& req = opt.signature_policy->for_reference(ref);
  const std::string scope = "scope \"" + req.scope + "\"";
  if (req.kind == PolicyRule::Kind::accept_anything) return "insecureAcceptAnything (" + scope + ")";
  if (req.kind == PolicyRule::Kind::reject)
    return Status(Code::failed_precondition, "signature policy " + scope + " rejects every image");
  std::vector<FetchedSignature> found;
  auto sig = steps.get_manifest(cosign_signature_tag(digest));
  if (!sig.ok()) {
    if (sig.status().code() != Code::not_found) return sig.status().context("signatures of " + digest);
    return judge_signatures(req, ref, digest, found);
  }
  auto layers = parse_cosign_manifest(sig->body);
  if (!layers.ok())
    return Status(Code::failed_precondition,
                  "signature policy " + scope + ": " + cosign_signature_tag(digest) + ": " + layers.status().message());
  for (const auto& l : *layers) {
    FetchedSignature f;
    auto signature = decode_base64_bytes(l.signature_base64);
    if (l.size < 0 || l.size > kMaxPayloadBytes) {
      f.problem =
          "a payload of " + std::to_string(l.size) + " bytes (at most " + std::to_string(kMaxPayloadBytes) + ")";
    } else if (!signature || signature->empty()) {
      f.problem = "no base64 signature in its dev.cosignproject.cosign/signature annotation";
    } else {
      lease.keep(l.digest);
      lease.collect_after = true;
      Status s = fetch_blob(steps, Descriptor{.media_type = "", .digest = l.digest, .size = l.size},
                            "signature payload " + l.digest);
      auto payload = s.ok() ? blobs->read(l.digest, kMaxPayloadBytes) : Result<std::string>(s);
      if (!payload.ok()) return payload.status().context("signatures of " + digest);
      f.payload = std::move(*payload);
      f.signature = std::move(*signature);
    }
    found.push_back(std::move(f));
  }
  return judge_signatures(req, ref, digest, found);
}

}  // namespace berth
