// CdiRegistry: the spec files of the CDI dirs as last read, and the device index built from them
// (precedence by dir, same-dir conflicts, invalid files). Only files whose stamp changed (or is
// too recent to trust) are read again; the index is rebuilt only when a file changed.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "berth/bounded_read.h"
#include "berth/cdi.h"
#include "berth/mutex.h"
#include "cdi_names.h"
#include "spec_dir.h"
#include "spec_document.h"
#include "spec_parse.h"

namespace berth {
namespace {

bool no_edits(const CdiContainerEdits& e) {
  return e.env.empty() && e.device_nodes.empty() && e.mounts.empty() && e.hooks.empty() && e.additional_gids.empty();
}

// Lowest priority first, each dir once (a repeated dir keeps its last, highest, place).
std::vector<std::string> normalized_dirs(std::vector<std::string> dirs) {
  for (auto& d : dirs)
    while (d.size() > 1 && d.back() == '/') d.pop_back();
  std::vector<std::string> out;
  for (size_t i = 0; i < dirs.size(); ++i)
    if (std::find(dirs.begin() + i + 1, dirs.end(), dirs[i]) == dirs.end()) out.push_back(dirs[i]);
  return out;
}

}  // namespace

struct CdiRegistry::State {
  struct LoadedSpec {
    size_t priority = 0;  // the index of its dir
    cdi::FileStamp stamp;
    int64_t read_at_ns = 0;
    std::string bytes;
    std::optional<cdi::SpecFile> spec;
    std::string error;               // "<path>: <why>" when !spec
    std::vector<std::string> names;  // qualified names the file names, even when invalid
    std::string untrusted;           // SpecDirEntry::untrusted when it was listed
  };

  struct DeviceRef {
    const LoadedSpec* file;
    const std::string* path;
    size_t index;  // in file->spec->devices
  };

  Mutex mu;
  std::vector<std::string> dirs BERTH_GUARDED_BY(mu);
  std::map<std::string, LoadedSpec> files BERTH_GUARDED_BY(mu);  // by path
  bool indexed BERTH_GUARDED_BY(mu) = false;
  std::map<std::string, DeviceRef> devices BERTH_GUARDED_BY(mu);        // qualified name -> where it is defined
  std::map<std::string, std::string> unavailable BERTH_GUARDED_BY(mu);  // qualified name -> why it cannot be used
  std::vector<std::string> failed BERTH_GUARDED_BY(mu);  // files that failed with no device names to blame

  void rescan() BERTH_REQUIRES(mu) {
    bool changed = false;
    std::set<std::string> present;
    for (size_t priority = 0; priority < dirs.size(); ++priority) {
      for (auto& entry : cdi::list_spec_dir(dirs[priority])) {
        auto it = files.find(entry.path);
        bool known = it != files.end() && it->second.priority == priority && it->second.untrusted == entry.untrusted;
        if (known && (!entry.untrusted.empty() ||
                      (it->second.stamp == entry.stamp && !cdi::stamp_is_racy(entry.stamp, it->second.read_at_ns)))) {
          present.insert(entry.path);
          continue;
        }
        if (!entry.untrusted.empty()) {  // not even read
          present.insert(entry.path);
          load(entry, priority, 0, Status(Code::failed_precondition, entry.path + ": skipped: " + entry.untrusted));
          changed = true;
          continue;
        }
        int64_t read_at = cdi::wall_clock_ns();  // before the read: a write during it is caught next time
        auto bytes = read_regular_file(entry.path, cdi::kMaxSpecBytes, entry.path);
        if (!bytes.ok() && bytes.status().code() == Code::not_found) continue;  // gone since the listing
        present.insert(entry.path);
        if (known && bytes.ok() && *bytes == it->second.bytes) {
          it->second.stamp = entry.stamp;
          it->second.read_at_ns = read_at;
          continue;
        }
        load(entry, priority, read_at, std::move(bytes));
        changed = true;
      }
    }
    for (auto it = files.begin(); it != files.end();) {
      if (present.count(it->first)) {
        ++it;
      } else {
        spdlog::debug("cdi: spec file {} is gone", it->first);
        it = files.erase(it);
        changed = true;
      }
    }
    if (changed || !indexed) reindex();
  }

  void load(const cdi::SpecDirEntry& entry, size_t priority, int64_t read_at, Result<std::string> bytes)
      BERTH_REQUIRES(mu) {
    LoadedSpec f;
    f.priority = priority;
    f.untrusted = entry.untrusted;
    f.stamp = entry.stamp;
    f.read_at_ns = read_at;
    if (bytes.ok()) {
      f.bytes = std::move(*bytes);
      auto spec = cdi::parse_spec(f.bytes, entry.path, &f.names);
      if (spec.ok())
        f.spec = std::move(*spec);
      else
        f.error = spec.status().message();
    } else {
      f.error = bytes.status().message();  // unreadable, or too big
    }
    if (f.spec)
      spdlog::debug("cdi: read {} ({} devices of {})", entry.path, f.spec->devices.size(), f.spec->kind);
    else
      spdlog::warn("cdi: spec file unusable, its devices are unavailable: {}", f.error);
    files[entry.path] = std::move(f);
  }

  void reindex() BERTH_REQUIRES(mu) {
    indexed = true;
    devices.clear();
    unavailable.clear();
    failed.clear();
    std::vector<std::pair<const std::string*, const LoadedSpec*>> order;
    for (const auto& [path, f] : files) order.push_back({&path, &f});
    std::stable_sort(order.begin(), order.end(),
                     [](auto& a, auto& b) { return a.second->priority < b.second->priority; });
    std::map<std::string, std::string> conflicts;  // at the highest priority defining the name
    std::map<std::string, std::string> invalid;
    for (const auto& [path, f] : order) {
      if (!f->spec) {
        // Blamed on the devices it names; a file naming none that could be asked for (it did not
        // parse, or its kind or names are malformed) is listed in "unknown device" errors instead.
        bool blamed = false;
        for (const auto& n : f->names)
          if (cdi::parse_qualified_name(n).ok()) invalid[n] = "invalid spec file " + f->error, blamed = true;
        if (!blamed) failed.push_back(f->error);
        continue;
      }
      for (size_t i = 0; i < f->spec->devices.size(); ++i) {
        std::string name = f->spec->kind + "=" + f->spec->devices[i].name;
        auto it = devices.find(name);
        if (it != devices.end() && it->second.file->priority == f->priority) {
          conflicts[name] = "defined by both " + *it->second.path + " and " + *path + " in one dir, so by neither";
          continue;
        }
        conflicts.erase(name);  // a higher dir's definition replaces the lower ones, conflicting or not
        devices[name] = DeviceRef{f, path, i};
      }
    }
    for (auto& [name, why] : conflicts) {
      devices.erase(name);
      unavailable[name] = std::move(why);
    }
    // An invalid file's devices are unavailable only if no valid file defines them (CDI ignores
    // the invalid file).
    for (auto& [name, why] : invalid)
      if (!devices.count(name)) unavailable.emplace(name, std::move(why));
  }

  std::string unknown(const std::string& name) const BERTH_REQUIRES(mu) {
    std::string known;
    size_t shown = 0;
    for (const auto& [n, ref] : devices) {
      if (shown++ == 32) {
        known += ", and " + std::to_string(devices.size() - 32) + " more";
        break;
      }
      known += (known.empty() ? "" : ", ") + n;
    }
    std::string msg = "CDI device '" + name + "': unknown (known: " + (known.empty() ? "none" : known) + ")";
    if (!failed.empty()) {
      msg += "; spec files that failed to load: ";
      for (size_t i = 0; i < failed.size(); ++i) msg += (i ? "; " : "") + failed[i];
    }
    return msg;
  }
};

CdiRegistry::CdiRegistry(std::vector<std::string> dirs) : state_(std::make_unique<State>()) {
  set_dirs(std::move(dirs));
}

void CdiRegistry::set_dirs(std::vector<std::string> dirs) {
  MutexLock lock(state_->mu);
  state_->dirs = normalized_dirs(std::move(dirs));
}

CdiRegistry::~CdiRegistry() = default;

Result<CdiEdits> CdiRegistry::resolve(const std::vector<std::string>& names) {
  MutexLock lock(state_->mu);
  state_->rescan();
  CdiEdits out;
  std::set<std::string> done;
  std::set<const State::LoadedSpec*> specs_applied;
  for (const auto& name : names) {
    if (!done.insert(name).second) continue;
    if (auto q = cdi::parse_qualified_name(name); !q.ok()) return q.status();
    auto it = state_->devices.find(name);
    if (it == state_->devices.end()) {
      auto bad = state_->unavailable.find(name);
      if (bad != state_->unavailable.end()) return failed_precondition("CDI device '" + name + "': " + bad->second);
      return not_found(state_->unknown(name));
    }
    const State::DeviceRef& ref = it->second;
    const cdi::SpecFile& spec = *ref.file->spec;
    // A spec's own edits once, before its first device's (as the CDI reference injects them).
    if (specs_applied.insert(ref.file).second && !no_edits(spec.edits)) out.blocks.push_back({spec.path, spec.edits});
    out.blocks.push_back({spec.path + ": device " + name, spec.devices[ref.index].edits});
  }
  return out;
}

std::vector<std::string> CdiRegistry::known_devices() {
  MutexLock lock(state_->mu);
  state_->rescan();
  std::vector<std::string> out;
  for (const auto& [name, ref] : state_->devices) out.push_back(name);
  return out;
}

}  // namespace berth
