// index.json: {"version":1,"images":[{id, repo_tags, repo_digests, size, layers, config, pinned,
// runtime_handlers, removed}]}. The image config is stored as pulled; its summary is recomputed when loaded.
#include "image_index.h"

#include <cerrno>
#include <nlohmann/json.hpp>
#include <sstream>

#include <spdlog/spdlog.h>

#include "berth/atomic_file.h"
#include "berth/file_text.h"
#include "berth/image_reference.h"
#include "berth/json_fields.h"

namespace berth {

using nlohmann::json;

Result<ImageConfigSummary> summarise_image_config(const std::string& config_json) {
  ImageConfigSummary s;
  auto j = json::parse(config_json, nullptr, false);
  if (!j.is_object()) return invalid_argument("image config is not a JSON object");
  JsonFields top(j);
  const json* c = top.object("config");
  if (!top.ok()) return top.status();
  if (!c) return s;
  JsonFields f = top.nested(*c, "config");
  s.entrypoint = f.strings("Entrypoint");
  s.cmd = f.strings("Cmd");
  s.env = f.strings("Env");
  s.working_dir = f.string("WorkingDir");
  s.user = f.string("User");
  s.stop_signal = f.string("StopSignal");
  s.labels = f.string_map("Labels");
  if (!f.ok()) return f.status();
  return s;
}

Status ImageIndex::load() {
  auto text = read_file_bytes(file_);
  if (!text.ok()) return text.status().code() == Code::not_found ? ok_status() : text.status();
  auto j = json::parse(*text, nullptr, false);
  const std::string what = "image index " + file_;
  if (!j.is_object()) return internal_error(what + " is not a version 1 index");
  JsonFields top(j);
  int64_t version = top.integer<int64_t>("version", 0);
  const json* records = top.array("images");
  if (!top.ok() || version != 1 || !records) return internal_error(what + " is not a version 1 index");
  std::vector<ImageRecord> images;
  std::set<std::string> removed;
  for (size_t i = 0; i < records->size(); ++i) {
    JsonFields e((*records)[i], "images[" + std::to_string(i) + "]");
    ImageRecord r;
    r.id = e.string("id");
    r.repo_tags = e.strings("repo_tags");
    r.repo_digests = e.strings("repo_digests");
    r.size = e.integer<uint64_t>("size", 0);
    r.layers = e.strings("layers");
    r.config_json = e.string("config");
    r.pinned = e.boolean("pinned", false);
    r.accepted_by = e.string("accepted_by");
    // Records older than the field were pulled for the default handler (CRI clients sent none).
    r.runtime_handlers = e.has("runtime_handlers") ? e.strings("runtime_handlers") : std::vector<std::string>{""};
    bool is_removed = e.boolean("removed", false);
    // The index is berthd's own file: a record of the wrong shape means it is damaged, and
    // dropping the record could let garbage collection take layers containers still use.
    if (!e.ok()) return Status(Code::internal, e.status().message()).context(what);
    if (!is_sha256_digest(r.id)) continue;
    // Checked when pulled; a config that no longer reads only loses its defaults, not the image.
    auto summary = summarise_image_config(r.config_json);
    if (summary.ok())
      r.config = std::move(*summary);
    else
      spdlog::warn("{}: image {}: its config: {}", what, r.id, summary.status().message());
    if (is_removed) removed.insert(r.id);
    images.push_back(std::move(r));
  }
  images_ = std::move(images);
  removed_ = std::move(removed);
  return ok_status();
}

Status ImageIndex::save() const {
  json arr = json::array();
  for (const auto& r : images_) {
    json e{{"id", r.id},
           {"repo_tags", r.repo_tags},
           {"repo_digests", r.repo_digests},
           {"size", r.size},
           {"layers", r.layers},
           {"config", r.config_json},
           {"pinned", r.pinned},
           {"runtime_handlers", r.runtime_handlers}};
    if (!r.accepted_by.empty()) e["accepted_by"] = r.accepted_by;
    if (is_removed(r.id)) e["removed"] = true;
    arr.push_back(std::move(e));
  }
  std::string text;
  try {
    text = json{{"version", 1}, {"images", arr}}.dump();
  } catch (const json::exception& e) {  // a string that is not UTF-8; pulls check configs, so not expected
    return internal_error("write image index " + file_ + ": " + e.what());
  }
  return write_file_atomically(file_, text);
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

static bool add_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) != v.end()) return false;
  v.push_back(s);
  return true;
}

bool ImageIndex::upsert(const ImageRecord& image) {
  bool changed = false;
  for (auto& r : images_)
    if (r.id != image.id)
      for (const auto& t : image.repo_tags) changed |= std::erase(r.repo_tags, t) > 0;
  for (auto& r : images_) {
    if (r.id != image.id) continue;
    if (removed_.erase(r.id)) {
      r.repo_tags = image.repo_tags;
      r.repo_digests = image.repo_digests;
      r.pinned = image.pinned;
      r.runtime_handlers = image.runtime_handlers;
      r.accepted_by = image.accepted_by;
      return true;
    }
    for (const auto& t : image.repo_tags) changed |= add_unique(r.repo_tags, t);
    for (const auto& d : image.repo_digests) changed |= add_unique(r.repo_digests, d);
    // An image that serves every handler (no handler recorded) goes on serving them all.
    if (!r.runtime_handlers.empty())
      for (const auto& h : image.runtime_handlers) changed |= add_unique(r.runtime_handlers, h);
    changed |= image.pinned && !r.pinned;
    changed |= image.accepted_by != r.accepted_by;
    r.accepted_by = image.accepted_by;
    r.pinned = r.pinned || image.pinned;
    return changed;
  }
  images_.push_back(image);
  return true;
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
    r.runtime_handlers.clear();
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
