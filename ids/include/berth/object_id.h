// Object ids (sandboxes, containers): 64 random hex characters; and the lookup every id argument
// gets, an exact id or a prefix that names exactly one object, as the CRI tools expect.
#pragma once

#include <string>

#include "berth/status.h"

namespace berth {

std::string new_object_id();

// `objects` maps ids to (shared) pointers. An unknown id sets *err (when given) to NOT_FOUND
// naming the `kind`; a prefix of several ids to INVALID_ARGUMENT naming the request `field`.
template <class Map>
typename Map::mapped_type find_by_id_or_prefix(const Map& objects, const std::string& id_or_prefix,
                                               const std::string& kind, const std::string& field, Status* err) {
  if (auto it = objects.find(id_or_prefix); it != objects.end()) return it->second;
  typename Map::mapped_type match{};
  if (!id_or_prefix.empty()) {
    for (auto it = objects.lower_bound(id_or_prefix); it != objects.end() && it->first.rfind(id_or_prefix, 0) == 0;
         ++it) {
      if (match) {
        if (err) *err = invalid_argument(field + ": prefix '" + id_or_prefix + "' matches several " + kind + "s");
        return {};
      }
      match = it->second;
    }
  }
  if (!match && err) *err = not_found(kind + " " + id_or_prefix + " not found");
  return match;
}

}  // namespace berth
