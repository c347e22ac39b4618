// The Kubernetes Status objects (metav1.Status as JSON, fields in Go's order) that remote-command
// v4 clients parse for the exit code: Success, NonZeroExitCode with an ExitCode cause, or
// InternalError; and the plain error text of the older protocol versions.
#include "exit_status.h"

#include <nlohmann/json.hpp>

namespace berth::streaming {

namespace {

using ordered = nlohmann::ordered_json;

ordered base(const char* status) {
  ordered j;
  j["metadata"] = ordered::object();
  j["status"] = status;
  return j;
}

std::string internal_error(bool json, const std::string& cause) {
  std::string message = "Internal error occurred: " + cause;
  if (!json) return message;
  ordered j = base("Failure");
  j["message"] = message;
  j["reason"] = "InternalError";
  j["details"] = {{"causes", ordered::array({ordered{{"message", cause}}})}};
  j["code"] = 500;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string cause_text(SessionVerb verb, const Status& why) {
  return std::string(verb == SessionVerb::exec ? "error executing command in container: "
                                               : "error attaching to container: ") +
         why.message();
}

}  // namespace

std::string exit_status_message(bool status_json, SessionVerb verb, const Result<int>& outcome) {
  if (!outcome.ok()) return internal_error(status_json, cause_text(verb, outcome.status()));
  int code = *outcome;
  if (verb == SessionVerb::attach || code == 0) return status_json ? base("Success").dump() : "";
  std::string message = "command terminated with non-zero exit code: exit status " + std::to_string(code);
  if (!status_json) return message;
  ordered j = base("Failure");
  j["message"] = message;
  j["reason"] = "NonZeroExitCode";
  j["details"] = {{"causes", ordered::array({ordered{{"reason", "ExitCode"}, {"message", std::to_string(code)}}})}};
  return j.dump();
}

std::string start_failure_message(bool status_json, SessionVerb verb, const Status& why) {
  return internal_error(status_json, cause_text(verb, why));
}

}  // namespace berth::streaming
