// The seccomp choice of a CRI security context (a sandbox's or a container's: both carry the
// `seccomp` profile and the older `seccomp_profile_path`), as oci/'s SeccompRequest.
#pragma once

#include <string>

#include "berth/cri_messages.h"
#include "berth/seccomp_profile.h"

namespace berth {

// `prefix` is the security context's field path in the request ("linux.security_context").
template <class SecurityContext>
Result<SeccompRequest> seccomp_request_of(const SecurityContext& sc, const std::string& prefix) {
  namespace v1 = runtime::v1;
  const std::string field = prefix + ".seccomp";
  if (sc.has_seccomp()) {
    switch (sc.seccomp().profile_type()) {
      case v1::SecurityProfile::RuntimeDefault: return SeccompRequest{SeccompKind::runtime_default, "", field};
      case v1::SecurityProfile::Unconfined: return SeccompRequest{SeccompKind::unconfined, "", field};
      case v1::SecurityProfile::Localhost:
        return SeccompRequest{SeccompKind::localhost, sc.seccomp().localhost_ref(), field};
      default: return invalid_argument(field + ": unknown profile type");
    }
  }
  const std::string& p = sc.seccomp_profile_path();
  const std::string pfield = prefix + ".seccomp_profile_path";
  if (p.empty() || p == "unconfined") return SeccompRequest{SeccompKind::unconfined, "", pfield};
  if (p == "runtime/default" || p == "docker/default") return SeccompRequest{SeccompKind::runtime_default, "", pfield};
  if (p.rfind("localhost/", 0) == 0) return SeccompRequest{SeccompKind::localhost, p.substr(10), pfield};
  return invalid_argument(pfield + ": unknown profile '" + p + "'");
}

}  // namespace berth
