// SignaturePolicy: which images a pull may record, per registry or repository scope: any
// (insecureAcceptAnything), none (reject), or those signed by given keys (signedBy), in the form
// cosign stores signatures: a manifest tagged sha256-<hex>.sig beside the image whose layers are
// simple-signing payloads, each with its signature in the layer's annotation. Keys are ECDSA P-256
// or Ed25519 public keys (PEM); verification is nettle's (hogweed), the crypto berth already links.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "berth/image_reference.h"
#include "berth/status.h"

namespace berth {

struct PublicKey {
  enum class Kind { ecdsa_p256, ed25519 } kind = Kind::ed25519;
  std::string key;   // P-256: X then Y (64 bytes); Ed25519: 32 bytes
  std::string file;  // where it was read from (names it in messages)
};

// A PEM "PUBLIC KEY" (SubjectPublicKeyInfo) of P-256 or Ed25519; INVALID_ARGUMENT saying why not.
Result<PublicKey> parse_public_key_pem(const std::string& pem);

// Whether `signature` (P-256: DER ECDSA over sha256(payload); Ed25519: 64 bytes over the payload)
// is `key`'s for `payload`.
bool signature_verifies(const PublicKey& key, const std::string& payload, const std::string& signature);

// What a simple-signing payload claims.
struct SimpleSigning {
  std::string docker_reference;  // "registry/repository"
  std::string manifest_digest;   // "sha256:…"
  std::string type;              // "cosign container image signature"
};
Result<SimpleSigning> parse_simple_signing(const std::string& payload);

// The signature layers of a cosign signature manifest: the payload blob and its base64 signature.
struct CosignLayer {
  std::string digest;
  int64_t size = -1;
  std::string signature_base64;
};
Result<std::vector<CosignLayer>> parse_cosign_manifest(const std::string& body);

// The tag cosign stores the signatures of `manifest_digest` under: "sha256-<hex>.sig".
std::string cosign_signature_tag(const std::string& manifest_digest);

struct PolicyRule {
  enum class Kind { accept_anything, reject, signed_by } kind = Kind::accept_anything;
  std::vector<std::string> key_files;  // signed_by
};

class SignaturePolicy {
 public:
  // `scopes` by "host", "host/repo" or "host/repo/prefix" (the longest match wins), else `fallback`.
  // Reads every key file now: an error names the scope and the file.
  static Result<std::shared_ptr<const SignaturePolicy>> load(PolicyRule fallback,
                                                             const std::map<std::string, PolicyRule>& scopes);

  struct Requirement {
    std::string scope;  // "default" for the fallback
    PolicyRule::Kind kind;
    std::vector<PublicKey> keys;
  };
  const Requirement& for_reference(const ImageReference& ref) const;

  // "insecureAcceptAnything", "reject", "signedBy <file>, <file>" (for logs and ImageStatus).
  static std::string describe(const Requirement& r);

 private:
  Requirement fallback_;
  std::map<std::string, Requirement> scopes_;
};

// The verdict on the signatures found for a pull (`signatures`: each signature layer's payload and
// its decoded signature, or why it could not be had): the description of the key that accepted
// it, or FAILED_PRECONDITION naming the scope and why each one failed.
struct FetchedSignature {
  std::string payload;
  std::string signature;
  std::string problem;  // set when the payload or signature could not be had
};
Result<std::string> judge_signatures(const SignaturePolicy::Requirement& requirement, const ImageReference& ref,
                                     const std::string& manifest_digest,
                                     const std::vector<FetchedSignature>& signatures);

}  // namespace berth
