// Fuzz target: image references as CRI clients send them (image/image_reference.cc): whatever
// parses must normalise to a reference that parses back to itself.
#include "berth/image_reference.h"
#include "fuzz_support.h"

using namespace berth;

BERTH_FUZZ_TARGET(image_reference) {
  std::string text(reinterpret_cast<const char*>(data), size);
  (void)is_sha256_digest(text);
  auto ref = parse_image_reference(text);
  if (!ref.ok()) {
    FUZZ_CHECK(ref.status().code() == Code::invalid_argument);
    return 0;
  }
  FUZZ_CHECK(!ref->domain.empty() && !ref->repository.empty() && !ref->api_host().empty());
  FUZZ_CHECK(!ref->tag.empty() || !ref->digest.empty());
  FUZZ_CHECK(ref->digest.empty() || is_sha256_digest(ref->digest));
  FUZZ_CHECK(ref->name().size() <= 255);
  auto again = parse_image_reference(ref->string());
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->domain == ref->domain && again->repository == ref->repository && again->tag == ref->tag &&
             again->digest == ref->digest);
  return 0;
}
