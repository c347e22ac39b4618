// ImageIndex: the image records and their lookup by id, id prefix, tag and digest reference;
// persisted to <images>/index.json on every change. Not locked: ImageManager holds its lock.
// A removed image a container or sandbox still stands on keeps a hidden "removed" record, so its
// layers are still known (and kept) after a restart of berthd until its last user goes.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "berth/image_manager.h"

namespace berth {

class ImageIndex {
 public:
  explicit ImageIndex(std::string file) : file_(std::move(file)) {}
  Status load();
  Status save() const;

  // Lookups and listing leave removed records out.
  const ImageRecord* find(const std::string& reference) const;
  ImageRecord* mutable_find_id(const std::string& id);
  std::vector<ImageRecord> images() const;
  // Every record, removed ones too: what garbage collection keeps.
  const std::vector<ImageRecord>& all() const { return images_; }
  // By exact id, removed or not.
  const ImageRecord* find_any_id(const std::string& id) const;

  // Adds the image or merges tags, digests and pin into its record; a tag moves from any other
  // image. A removed record comes back as the image pulled now.
  // False when the index already said all of it (a pull of an image stored under that name):
  // nothing to save.
  bool upsert(const ImageRecord& image);
  bool erase(const std::string& id);
  // Hides the record (dropping its tags, digests and pin) but keeps its layers listed.
  void mark_removed(const std::string& id);
  bool is_removed(const std::string& id) const { return removed_.count(id) > 0; }
  const std::set<std::string>& removed() const { return removed_; }

 private:
  std::string file_;
  std::vector<ImageRecord> images_;
  std::set<std::string> removed_;  // ids of removed records
};

// The fields of an image config that containers default to. An error names the field of the
// wrong type; a config that is not a JSON object is an error too.
Result<ImageConfigSummary> summarise_image_config(const std::string& config_json);

}  // namespace berth
