// ImageIndex: the image records and their lookup by id, id prefix, tag and digest reference;
// persisted to <images>/index.json on every change. Not locked: ImageManager holds its lock.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "berth/image_manager.h"

namespace berth {

class ImageIndex {
 public:
  explicit ImageIndex(std::string file) : file_(std::move(file)) {}
  Status load();
  Status save() const;

  const ImageRecord* find(const std::string& reference) const;
  const std::vector<ImageRecord>& all() const { return images_; }
  // Adds the image or merges tags, digests and pin into its record; a tag moves from any other image.
  void upsert(const ImageRecord& image);
  bool erase(const std::string& id);
  ImageRecord* mutable_find_id(const std::string& id);

 private:
  std::string file_;
  std::vector<ImageRecord> images_;
};

ImageConfigSummary summarise_image_config(const std::string& config_json);

}  // namespace berth
