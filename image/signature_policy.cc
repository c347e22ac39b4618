// Key and signature formats are fixed-size here, so the DER is matched exactly rather than parsed
// in general: a P-256 SubjectPublicKeyInfo is 26 known bytes then the uncompressed point, an
// Ed25519 one 12 known bytes then the key; an ECDSA signature is SEQUENCE { INTEGER r, INTEGER s }.
#include "berth/signature_policy.h"

#include <gmp.h>
#include <algorithm>
#include <nettle/dsa.h>
#include <nettle/ecc-curve.h>
#include <nettle/ecc.h>
#include <nettle/ecdsa.h>
#include <nettle/eddsa.h>
#include <nettle/sha2.h>

#include <nlohmann/json.hpp>

#include "base64_bytes.h"
#include "berth/file_text.h"
#include "berth/json_fields.h"

namespace berth {

using nlohmann::json;

namespace {

constexpr unsigned char kP256Prefix[] = {0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
                                         0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00};
constexpr unsigned char kEd25519Prefix[] = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};

bool starts_with_bytes(const std::string& s, const unsigned char* prefix, size_t n) {
  return s.size() >= n && std::equal(prefix, prefix + n, reinterpret_cast<const unsigned char*>(s.data()));
}

// One DER INTEGER at `at` (short-form length), as big-endian magnitude bytes; advances `at`.
std::optional<std::string> der_integer(const std::string& der, size_t& at) {
  if (at + 2 > der.size() || static_cast<unsigned char>(der[at]) != 0x02) return std::nullopt;
  size_t len = static_cast<unsigned char>(der[at + 1]);
  if (len == 0 || len > 33 || at + 2 + len > der.size()) return std::nullopt;
  std::string v = der.substr(at + 2, len);
  at += 2 + len;
  if (static_cast<unsigned char>(v[0]) & 0x80) return std::nullopt;  // negative
  return v;
}

bool ecdsa_p256_verifies(const std::string& point, const std::string& payload, const std::string& der) {
  if (der.size() < 8 || static_cast<unsigned char>(der[0]) != 0x30 ||
      static_cast<size_t>(static_cast<unsigned char>(der[1])) != der.size() - 2)
    return false;
  size_t at = 2;
  auto r = der_integer(der, at);
  auto s = r ? der_integer(der, at) : std::nullopt;
  if (!r || !s || at != der.size()) return false;
  mpz_t x, y;
  mpz_init(x);
  mpz_init(y);
  mpz_import(x, 32, 1, 1, 1, 0, point.data());
  mpz_import(y, 32, 1, 1, 1, 0, point.data() + 32);
  ecc_point pub;
  ecc_point_init(&pub, nettle_get_secp_256r1());
  bool on_curve = ecc_point_set(&pub, x, y) != 0;
  dsa_signature sig;
  dsa_signature_init(&sig);
  mpz_import(sig.r, r->size(), 1, 1, 1, 0, r->data());
  mpz_import(sig.s, s->size(), 1, 1, 1, 0, s->data());
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_ctx h;
  sha256_init(&h);
  sha256_update(&h, payload.size(), reinterpret_cast<const uint8_t*>(payload.data()));
  sha256_digest(&h, sizeof digest, digest);
  bool ok = on_curve && ecdsa_verify(&pub, sizeof digest, digest, &sig) != 0;
  dsa_signature_clear(&sig);
  ecc_point_clear(&pub);
  mpz_clear(x);
  mpz_clear(y);
  return ok;
}

}  // namespace

Result<PublicKey> parse_public_key_pem(const std::string& pem) {
  const std::string begin = "-----BEGIN PUBLIC KEY-----", end = "-----END PUBLIC KEY-----";
  size_t b = pem.find(begin);
  size_t e = b == std::string::npos ? b : pem.find(end, b);
  if (e == std::string::npos) return invalid_argument("not a PEM public key (no BEGIN/END PUBLIC KEY lines)");
  std::string body;
  for (char c : pem.substr(b + begin.size(), e - b - begin.size()))
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') body += c;
  auto der = decode_base64_bytes(body);
  if (!der) return invalid_argument("PEM public key: not base64");
  PublicKey k;
  if (der->size() == sizeof kP256Prefix + 65 && starts_with_bytes(*der, kP256Prefix, sizeof kP256Prefix) &&
      (*der)[sizeof kP256Prefix] == 0x04) {
    k.kind = PublicKey::Kind::ecdsa_p256;
    k.key = der->substr(sizeof kP256Prefix + 1);
    return k;
  }
  if (der->size() == sizeof kEd25519Prefix + 32 && starts_with_bytes(*der, kEd25519Prefix, sizeof kEd25519Prefix)) {
    k.kind = PublicKey::Kind::ed25519;
    k.key = der->substr(sizeof kEd25519Prefix);
    return k;
  }
  return invalid_argument("PEM public key: neither an ECDSA P-256 (uncompressed point) nor an Ed25519 key");
}

bool signature_verifies(const PublicKey& key, const std::string& payload, const std::string& signature) {
  if (key.kind == PublicKey::Kind::ed25519)
    return key.key.size() == ED25519_KEY_SIZE && signature.size() == ED25519_SIGNATURE_SIZE &&
           ed25519_sha512_verify(reinterpret_cast<const uint8_t*>(key.key.data()), payload.size(),
                                 reinterpret_cast<const uint8_t*>(payload.data()),
                                 reinterpret_cast<const uint8_t*>(signature.data())) != 0;
  return key.key.size() == 64 && ecdsa_p256_verifies(key.key, payload, signature);
}

Result<SimpleSigning> parse_simple_signing(const std::string& payload) {
  auto j = json::parse(payload, nullptr, false);
  if (!j.is_object()) return invalid_argument("payload: not a JSON object");
  JsonFields top(j, "payload");
  const json* critical = top.required_object("critical");
  if (!top.ok()) return top.status();
  JsonFields c = top.nested(*critical, "critical");
  const json* identity = c.required_object("identity");
  const json* image = c.required_object("image");
  SimpleSigning s;
  s.type = c.required_string("type");
  if (!c.ok()) return top.status();
  s.docker_reference = c.nested(*identity, "identity").required_string("docker-reference");
  s.manifest_digest = c.nested(*image, "image").required_string("docker-manifest-digest");
  if (!top.ok()) return top.status();
  return s;
}

Result<std::vector<CosignLayer>> parse_cosign_manifest(const std::string& body) {
  auto j = json::parse(body, nullptr, false);
  if (!j.is_object()) return invalid_argument("signature manifest: not a JSON object");
  JsonFields top(j, "signature manifest");
  const json* layers = top.required_array("layers");
  if (!top.ok()) return top.status();
  std::vector<CosignLayer> out;
  for (size_t i = 0; i < layers->size() && i < 16; ++i) {
    const json& l = (*layers)[i];
    if (!l.is_object()) return invalid_argument("signature manifest: layers[" + std::to_string(i) + "]: not an object");
    JsonFields f = top.nested(l, "layers[" + std::to_string(i) + "]");
    CosignLayer c;
    c.digest = f.required_string("digest");
    c.size = f.integer<int64_t>("size", -1);
    std::string media = f.string("mediaType");
    std::map<std::string, std::string> annotations = f.string_map("annotations");
    if (!top.ok()) return top.status();
    if (!is_sha256_digest(c.digest))
      return invalid_argument("signature manifest: layers[" + std::to_string(i) + "].digest: not a sha256 digest");
    if (media != "application/vnd.dev.cosign.simplesigning.v1+json") continue;
    c.signature_base64 = annotations["dev.cosignproject.cosign/signature"];
    out.push_back(std::move(c));
  }
  return out;
}

std::string cosign_signature_tag(const std::string& manifest_digest) {
  std::string tag = manifest_digest;
  if (size_t colon = tag.find(':'); colon != std::string::npos) tag[colon] = '-';
  return tag + ".sig";
}

Result<std::shared_ptr<const SignaturePolicy>> SignaturePolicy::load(PolicyRule fallback,
                                                                     const std::map<std::string, PolicyRule>& scopes) {
  auto requirement = [](const std::string& scope, const PolicyRule& rule) -> Result<Requirement> {
    Requirement r{scope, rule.kind, {}};
    for (const auto& file : rule.key_files) {
      auto text = read_file_bytes(file);
      if (!text.ok()) return text.status().context("signature policy scope " + scope);
      auto key = parse_public_key_pem(*text);
      if (!key.ok()) return key.status().context("signature policy scope " + scope + ": key " + file);
      key->file = file;
      r.keys.push_back(std::move(*key));
    }
    if (rule.kind == PolicyRule::Kind::signed_by && r.keys.empty())
      return invalid_argument("signature policy scope " + scope + ": signedBy names no key");
    return r;
  };
  auto policy = std::make_shared<SignaturePolicy>();
  auto f = requirement("default", fallback);
  if (!f.ok()) return f.status();
  policy->fallback_ = std::move(*f);
  for (const auto& [scope, rule] : scopes) {
    auto r = requirement(scope, rule);
    if (!r.ok()) return r.status();
    policy->scopes_[scope] = std::move(*r);
  }
  return std::shared_ptr<const SignaturePolicy>(std::move(policy));
}

const SignaturePolicy::Requirement& SignaturePolicy::for_reference(const ImageReference& ref) const {
  std::string path = ref.name();
  for (;;) {
    if (auto it = scopes_.find(path); it != scopes_.end()) return it->second;
    size_t slash = path.rfind('/');
    if (slash == std::string::npos) return fallback_;
    path.resize(slash);
  }
}

std::string SignaturePolicy::describe(const Requirement& r) {
  switch (r.kind) {
    case PolicyRule::Kind::accept_anything: return "insecureAcceptAnything";
    case PolicyRule::Kind::reject: return "reject";
    case PolicyRule::Kind::signed_by: break;
  }
  std::string files;
  for (const auto& k : r.keys) files += (files.empty() ? "" : ", ") + k.file;
  return "signedBy " + files;
}

Result<std::string> judge_signatures(const SignaturePolicy::Requirement& requirement, const ImageReference& ref,
                                     const std::string& manifest_digest,
                                     const std::vector<FetchedSignature>& signatures) {
  const std::string scope = "scope \"" + requirement.scope + "\"";
  if (signatures.empty()) {
    std::string files;
    for (const auto& k : requirement.keys) files += (files.empty() ? "" : ", ") + k.file;
    return Status(Code::failed_precondition, "signature policy " + scope + " requires a signature by " + files + "; " +
                                                 ref.name() + "@" + manifest_digest + " has none");
  }
  std::string why;
  for (size_t i = 0; i < signatures.size(); ++i) {
    const FetchedSignature& s = signatures[i];
    std::string problem = s.problem;
    if (problem.empty()) {
      const PublicKey* signer = nullptr;
      for (const auto& k : requirement.keys)
        if (signature_verifies(k, s.payload, s.signature)) signer = &k;
      auto claim = parse_simple_signing(s.payload);
      if (!signer)
        problem = "made by none of the policy's keys (or its payload was altered)";
      else if (!claim.ok())
        problem = claim.status().message();
      else if (claim->type != "cosign container image signature")
        problem = "payload type \"" + claim->type + "\" is not a cosign container image signature";
      else if (claim->manifest_digest != manifest_digest)
        problem = "signs " + claim->manifest_digest + ", not " + manifest_digest;
      else if (claim->docker_reference != ref.name())
        problem = "signs the identity " + claim->docker_reference + ", not " + ref.name();
      else
        return "signedBy " + signer->file + " (" + scope + ")";
    }
    why += (why.empty() ? "" : "; ") + std::string("signature ") + std::to_string(i + 1) + ": " + problem;
  }
  return Status(Code::failed_precondition,
                "signature policy " + scope + " refused " + ref.name() + "@" + manifest_digest + ": " + why);
}

}  // namespace berth
