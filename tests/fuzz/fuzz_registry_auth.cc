// Fuzz target: the node's registry credentials as read from outside (image/node_credentials.h):
// the first byte picks the auth file (docker's config.json format), a credential helper's answer,
// a secret's JWT expiry, or an auths key. What parses has normalised keys and helper names that
// are safe to put after "docker-credential-".
#include "berth/node_credentials.h"
#include "fuzz_support.h"

using namespace berth;

static void check_key(const std::string& k) {
  FUZZ_CHECK(k.rfind("https://", 0) != 0 && k.rfind("http://", 0) != 0);
  FUZZ_CHECK(k.empty() || k.back() != '/');
  FUZZ_CHECK(auth_file_key(k) == k);  // normalising twice changes nothing
}

BERTH_FUZZ_TARGET(registry_auth) {
  if (size == 0) return 0;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {
      auto f = parse_auth_file(text);
      if (!f.ok()) {
        FUZZ_CHECK(f.status().code() == Code::invalid_argument);
        break;
      }
      for (const auto& [k, c] : f->auths) {
        check_key(k);
        FUZZ_CHECK(!c.empty());
      }
      for (const auto& [host, name] : f->cred_helpers) {
        check_key(host);
        FUZZ_CHECK(!name.empty() && name.find('/') == std::string::npos && name[0] != '.');
      }
      FUZZ_CHECK(f->creds_store.find('/') == std::string::npos);
      break;
    }
    case 1: {
      auto c = parse_helper_answer(text);
      if (c.ok()) FUZZ_CHECK(!c->password.empty() || !c->identity_token.empty());
      break;
    }
    case 2:
      if (auto exp = jwt_expiry(text)) FUZZ_CHECK(*exp > 0);
      break;
    default: check_key(auth_file_key(text));
  }
  return 0;
}
