// Formats errno-carrying Status values and names codes for logs.
#include "berth/status.h"

#include <cerrno>
#include <cstring>

namespace berth {

Status errno_status(int err, std::string_view what, Code code) {
  const char* name = strerrorname_np(err);
  std::string msg(what);
  msg += ": ";
  msg += name ? name : ("errno " + std::to_string(err));
  msg += " (";
  msg += std::strerror(err);
  msg += ")";
  // A full filesystem is the node's state, not berth's fault: kubelet and operators act on it.
  if (code == Code::internal && (err == ENOSPC || err == EDQUOT)) code = Code::resource_exhausted;
  return Status(code, std::move(msg), err);
}

const char* code_name(Code code) {
  switch (code) {
    case Code::ok: return "OK";
    case Code::invalid_argument: return "INVALID_ARGUMENT";
    case Code::not_found: return "NOT_FOUND";
    case Code::already_exists: return "ALREADY_EXISTS";
    case Code::failed_precondition: return "FAILED_PRECONDITION";
    case Code::deadline_exceeded: return "DEADLINE_EXCEEDED";
    case Code::resource_exhausted: return "RESOURCE_EXHAUSTED";
    case Code::unavailable: return "UNAVAILABLE";
    case Code::unauthenticated: return "UNAUTHENTICATED";
    case Code::unimplemented: return "UNIMPLEMENTED";
    case Code::internal: return "INTERNAL";
    case Code::cancelled: return "CANCELLED";
  }
  return "UNKNOWN";
}

}  // namespace berth
