// index.json: {"version":1,"images":[{id, repo_tags, repo_digests, size, layers, config, pinned,
// removed}]}. The image config is stored as pulled; its summary is recomputed when loaded.
#include "image_index.h"

#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "berth/atomic_file.h"
#include "berth/image_reference.h"

namespace berth {

using nlohmann::json;

ImageConfigSummary summarise_image_config(const std::string& config_json) {
  ImageConfigSummary s;
  auto j = json::parse(config_json, nullptr, false);
  if (!j.is_object() || !j.contains("config") || !j["config"].is_object()) return s;
  const json& c = j["config"];
  auto strings = [&](const char* key) {
    std::vector<std::string> out;
    if (c.contains(key) && c[key].is_array())
      for (const auto& v : c[key])
        if (v.is_string()) out.push_back(v.get<std::string>());
    return out;
  };
  s.entrypoint = strings("Entrypoint");
  s.cmd = strings("Cmd");
  s.env = strings("Env");
  s.working_dir = c.value("WorkingDir", "");
  s.user = c.value("User", "");
  s.stop_signal = c.value("StopSignal", "");
  if (c.contains("Labels") && c["Labels"].is_object())
    for (auto& [k, v] : c["Labels"].items())
      if (v.is_string()) s.labels[k] = v.get<std::string>();
  return s;
}

Status ImageIndex::load() {
  std::ifstream in(file_);
  if (!in) return errno == ENOENT ? ok_status() : errno_status(errno, "read " + file_);
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = json::parse(ss.str(), nullptr, false);
  if (!j.is_object() || j.value("version", 0) != 1 || !j.contains("images"))
    return internal_error("image index " + file_ + " is not a version 1 index");
  images_.clear();
  removed_.clear();
  for (const auto& e : j["images"]) {
    ImageRecord r;
    r.id = e.value("id", "");
    r.repo_tags = e.value("repo_tags", std::vector<std::string>{});
    r.repo_digests = e.value("repo_digests", std::vector<std::string>{});
    r.size = e.value("size", uint64_t{0});
    r.layers = e.value("layers", std::vector<std::string>{});
    r.config_json = e.value("config", "");
    r.pinned = e.value("pinned", false);
    r.config = summarise_image_config(r.config_json);
    if (!is_sha256_digest(r.id)) continue;
    if (e.value("removed", false)) removed_.insert(r.id);
    images_.push_back(std::move(r));
  }
  return ok_status();
}

Status ImageIndex::save() const {
  json arr = json::array();
  for (const auto& r : images_) {
    json e{{"id", r.id}, {"repo_tags", r.repo_tags}, {"repo_digests", r.repo_digests}, {"size", r.size},
           {"layers", r.layers}, {"config", r.config_json}, {"pinned", r.pinned}};
    if (is_removed(r.id)) e["removed"] = true;
    arr.push_back(std::move(e));
  }
  return write_file_atomically(file_, json{{"version", 1}, {"images", arr}}.dump());
}

const ImageRecord* ImageIndex::find(const std::string& reference) const {
  if (reference.empty()) return nullptr;
  std::string id = reference.rfind("sha256:", 0) == 0 ? reference : "sha256:" + reference;
  for (const auto& r : images_)
    if (r.id == id) return is_removed(id) ? nullptr : &r;
  if (auto ref = parse_image_reference(reference); ref.ok()) {
    std::string s = ref->string();
    for (const auto& r : images_) {
      if (is_removed(r.id)) continue;
      for (const auto& t : r.repo_tags)
        if (t == s) return &r;
      for (const auto& d : r.repo_digests)
        if (d == s || (!ref->digest.empty() && d == ref->name() + "@" + ref->digest)) return &r;
    }
  }
  // A unique id prefix (at least 3 hex digits, as docker and crictl accept).
  std::string hex = id.substr(7);
  if (hex.size() < 3 || hex.find_first_not_of("0123456789abcdef") != std::string::npos) return nullptr;
  const ImageRecord* match = nullptr;
  for (const auto& r : images_) {
    if (!is_removed(r.id) && r.id.compare(7, hex.size(), hex) == 0) {
      if (match) return nullptr;
      match = &r;
    }
  }
  return match;
}

static void add_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

void ImageIndex::upsert(const ImageRecord& image) {
  for (auto& r : images_)
    if (r.id != image.id)
      for (const auto& t : image.repo_tags) std::erase(r.repo_tags, t);
  for (auto& r : images_) {
    if (r.id != image.id) continue;
    if (removed_.erase(r.id)) {
      r.repo_tags = image.repo_tags;
      r.repo_digests = image.repo_digests;
      r.pinned = image.pinned;
      return;
    }
    for (const auto& t : image.repo_tags) add_unique(r.repo_tags, t);
    for (const auto& d : image.repo_digests) add_unique(r.repo_digests, d);
    r.pinned = r.pinned || image.pinned;
    return;
  }
  images_.push_back(image);
}

bool ImageIndex::erase(const std::string& id) {
  removed_.erase(id);
  return std::erase_if(images_, [&](const ImageRecord& r) { return r.id == id; }) > 0;
}

void ImageIndex::mark_removed(const std::string& id) {
  for (auto& r : images_) {
    if (r.id != id) continue;
    r.repo_tags.clear();
    r.repo_digests.clear();
    r.pinned = false;
    removed_.insert(id);
  }
}

ImageRecord* ImageIndex::mutable_find_id(const std::string& id) {
  if (is_removed(id)) return nullptr;
  for (auto& r : images_)
    if (r.id == id) return &r;
  return nullptr;
}

const ImageRecord* ImageIndex::find_any_id(const std::string& id) const {
  for (const auto& r : images_)
    if (r.id == id) return &r;
  return nullptr;
}

std::vector<ImageRecord> ImageIndex::images() const {
  std::vector<ImageRecord> out;
  for (const auto& r : images_)
    if (!is_removed(r.id)) out.push_back(r);
  return out;
}

}  // namespace berth
