// Fuzz target: what a registry or an operator hands the signature policy (image/signature_policy.h):
// the first byte picks a cosign signature manifest, a simple-signing payload, a PEM public key, or
// a signature checked against a fixed key of each kind over the rest of the input. Nothing that
// does not verify may be accepted by judge_signatures.
#include "berth/signature_policy.h"
#include "fuzz_support.h"

using namespace berth;

BERTH_FUZZ_TARGET(image_signature) {
  if (size == 0) return 0;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {
      auto layers = parse_cosign_manifest(text);
      if (layers.ok()) {
        FUZZ_CHECK(layers->size() <= 16);
        for (const auto& l : *layers) FUZZ_CHECK(l.digest.rfind("sha256:", 0) == 0 && l.digest.size() == 71);
      }
      break;
    }
    case 1: (void)parse_simple_signing(text); break;
    case 2: {
      auto key = parse_public_key_pem(text);
      if (key.ok()) FUZZ_CHECK(key->key.size() == (key->kind == PublicKey::Kind::ed25519 ? 32u : 64u));
      break;
    }
    default: {
      // The input split in two: a payload and a signature; neither key made it.
      size_t half = text.size() / 2;
      std::string payload = text.substr(0, half), signature = text.substr(half);
      PublicKey ed{PublicKey::Kind::ed25519, std::string(32, '\x01'), "ed.pub"};
      PublicKey ec{PublicKey::Kind::ecdsa_p256, std::string(64, '\x02'), "ec.pub"};
      (void)signature_verifies(ec, payload, signature);
      SignaturePolicy::Requirement req{"fuzz", PolicyRule::Kind::signed_by, {ed, ec}};
      auto ref = parse_image_reference("registry.example/app");
      auto verdict = judge_signatures(req, *ref, "sha256:" + std::string(64, 'a'), {{payload, signature, ""}});
      FUZZ_CHECK(!verdict.ok() || signature_verifies(ed, payload, signature) ||
                 signature_verifies(ec, payload, signature));
    }
  }
  return 0;
}
