// CheckpointContainer and the import half of a restore. A checkpoint is made in a work dir of
// berthd's (<root>/checkpoints/<name>): the runtime's `checkpoint --leave-running` writes CRIU's
// images and logs there, berthd a copy of the log at once, berth-checkpoint-archive the writable
// layer's diff, berthd the dumps of config, spec and status and CRI-O's list of bind mounts; the
// helper then packs it into a temp file beside the location, which is renamed onto it (never over
// a file that is there). The temp file's name is kept in <name>.target until then, so a berthd
// killed mid-way removes it at its next start along with the work dir: no half-written archive
// stays at the location's side, and a container the cut dump left frozen is resumed.
// A restore's archive is unpacked (confined, by the helper) into <root>/restores/<name>, its
// config.dump names the base image, and create_container builds the container from that image
// with the diff applied to its new upper dir and the CRIU images moved beside that dir.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <spdlog/spdlog.h>

#include "berth/atomic_file.h"
#include "berth/checkpoint_config.h"
#include "berth/command.h"
#include "berth/container_manager.h"
#include "berth/criu_support.h"
#include "berth/fault_point.h"
#include "berth/file_text.h"
#include "berth/file_tree.h"
#include "berth/object_id.h"
#include "berth/oci_spec.h"
#include "berth/wall_clock.h"
#include "container_state.h"

namespace berth {

namespace v1 = runtime::v1;
namespace fs = std::filesystem;

namespace {

constexpr auto kDefaultTimeout = std::chrono::minutes(5);
constexpr auto kHelperTimeout = std::chrono::minutes(30);

std::string rfc3339(int64_t ns) {
  time_t s = static_cast<time_t>(ns / 1'000'000'000);
  tm t{};
  gmtime_r(&s, &t);
  char buf[64];
  size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &t);
  snprintf(buf + n, sizeof buf - n, ".%09lldZ", static_cast<long long>(ns % 1'000'000'000));
  return buf;
}

// Removes a work dir (and the temp archive its marker names) however the checkpoint ends.
struct CheckpointWork {
  std::string dir, marker;
  ~CheckpointWork() {
    if (std::string tmp = read_text_file(marker); !tmp.empty()) ::unlink(tmp.c_str());
    ::unlink(marker.c_str());
    if (Status s = remove_tree(dir); !s.ok()) spdlog::warn("checkpoint: {}", s.message());
  }
};

uint64_t free_bytes(const std::string& dir) {
  struct statvfs v {};
  if (::statvfs(dir.c_str(), &v) != 0) return 0;
  return static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
}

// CRI-O's bind.mounts: the container's bind mounts but those its restore makes itself, with what
// each source is (CRIU binds only a directory onto a directory), so that a restore on another node
// can make the sources missing there.
nlohmann::json bind_mounts_of(const oci::Spec& spec) {
  static const std::set<std::string> kMadeByTheRestore = {
      "/dev", "/dev/shm", "/proc", "/run", "/run/.containerenv", "/run/secrets", "/sys"};
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : spec.mounts) {
    const bool bind = m.type == "bind" || std::any_of(m.options.begin(), m.options.end(),
                                                      [](const std::string& o) { return o == "bind" || o == "rbind"; });
    struct stat st {};
    if (!bind || kMadeByTheRestore.count(m.destination) || ::stat(m.source.c_str(), &st) != 0) continue;
    out.push_back({{"source", m.source},
                   {"destination", m.destination},
                   {"file_type", S_ISDIR(st.st_mode) ? "directory" : "file"},
                   {"permissions", st.st_mode & 07777}});
  }
  return out;
}

}  // namespace

Status run_archive_helper(const std::string& helper, std::vector<std::string> args, std::chrono::milliseconds timeout,
                          const std::string& what) {
  args.insert(args.begin(), helper);
  auto r = run_command({.argv = std::move(args), .timeout = timeout});
  if (!r.ok()) return r.status().context(what);
  if (r->success()) return ok_status();
  std::string err = r->err;
  while (!err.empty() && err.back() == '\n') err.pop_back();
  if (err.empty()) err = r->describe(timeout);
  if (r->timed_out) return deadline_exceeded(what + ": timed out after " + r->describe(timeout));
  Code code = r->exit_code == 2   ? Code::invalid_argument
              : r->exit_code == 3 ? Code::resource_exhausted
                                  : Code::internal;
  return Status(code, what + ": " + err);
}

std::vector<std::string> sweep_checkpoint_leftovers(const std::string& checkpoints_dir,
                                                    const std::string& restores_dir) {
  std::error_code ec;
  std::vector<std::string> cut;
  for (const auto& e : fs::directory_iterator(checkpoints_dir, ec)) {
    const std::string name = e.path().filename();
    if (e.path().extension() != ".target") {
      if (name.size() == 25 && name[12] == '-') cut.push_back(name.substr(0, 12));  // <id12>-<random12>
      continue;
    }
    // The temp archive a killed checkpoint left beside its location (its name, and only a name
    // berth gives, is in the marker).
    std::string tmp = read_text_file(e.path());
    if (tmp.find(".berth-checkpoint-") != std::string::npos && ::unlink(tmp.c_str()) == 0)
      spdlog::info("containers: removed the temp archive {} of a checkpoint cut short", tmp);
  }
  for (const std::string& dir : {checkpoints_dir, restores_dir})
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (Status s = remove_tree(e.path()); !s.ok())
        spdlog::warn("containers: {}", s.message());
      else
        spdlog::info("containers: removed {}, left by a checkpoint or restore cut short", e.path().string());
  return cut;
}

void thaw_if_paused(const OciRuntime& rt, const std::string& id, const std::string& why) {
  auto state = rt.state(id);
  if (!state.ok() || state->status != "paused") return;
  auto resumed = run_command({.argv = rt.argv({"resume", id}), .timeout = std::chrono::seconds(30)});
  if (resumed.ok() && resumed->success())
    spdlog::warn("container {}: resumed, found frozen ({})", id, why);
  else
    spdlog::error("container {}: found frozen ({}), and resuming it failed", id, why);
}

void thaw_cut_checkpoints(ContainerManager::Impl& impl, const std::vector<std::string>& prefixes) {
  if (prefixes.empty()) return;
  std::vector<std::shared_ptr<Container>> found;
  {
    MutexLock lock(impl.mu);
    for (const auto& [id, c] : impl.containers)
      for (const auto& p : prefixes)
        if (id.rfind(p, 0) == 0) found.push_back(c);
  }
  for (const auto& c : found) {
    auto rt = impl.runtime_for(c->runtime_handler);
    if (rt.ok()) thaw_if_paused(*rt, c->id, "its checkpoint was cut short");
  }
}

Status ContainerManager::checkpoint(const std::string& id_or_prefix, const std::string& location,
                                    int64_t timeout_seconds) {
  if (location.empty()) return invalid_argument("location: missing (the path of the archive to write)");
  if (location.front() != '/') return invalid_argument("location: '" + location + "' is not an absolute path");
  if (timeout_seconds < 0) return invalid_argument("timeout: " + std::to_string(timeout_seconds) + " is negative");
  const fs::path parent = fs::path(location).parent_path();
  struct stat st {};
  if (::stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return invalid_argument("location: its directory " + parent.string() + " does not exist");
  if (::lstat(location.c_str(), &st) == 0)
    return already_exists("location: " + location + " exists; berth writes a checkpoint only to a new file");
  Status err;
  auto c = impl_->find(id_or_prefix, &err);
  if (!c) return err;
  const std::string id = c->id;
  const std::string what = "checkpoint container " + id;
  if (!impl_->opt.criu) return failed_precondition(what + ": checkpoint/restore is not configured in this berthd");
  if (Status s = impl_->opt.criu->usable(); !s.ok()) return s.context(what);
  if (c->checkpointing.exchange(true)) return failed_precondition(what + ": a checkpoint of it is already in progress");
  struct Done {
    std::atomic<bool>& flag;
    ~Done() { flag = false; }
  } done{c->checkpointing};
  MutexLock op(c->op);
  if (c->state() != v1::CONTAINER_RUNNING)
    return failed_precondition(what + ": it is " + v1::ContainerState_Name(c->state()) + ", not RUNNING");
  auto rt = impl_->runtime_for(c->runtime_handler);
  if (!rt.ok()) return rt.status().context(what);
  const auto deadline =
      std::chrono::steady_clock::now() +
      (timeout_seconds > 0 ? std::chrono::seconds(timeout_seconds) : std::chrono::seconds(kDefaultTimeout));
  auto left = [&] {
    return std::max(std::chrono::milliseconds(1),
                    std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()));
  };

  ContainerRecord rec;
  v1::ContainerConfig config;
  {
    MutexLock lock(c->mu);
    rec = c->rec;
    config = c->config;
  }
  const std::string name = id.substr(0, 12) + "-" + new_object_id().substr(0, 12);
  CheckpointWork work{impl_->checkpoints_dir + "/" + name, impl_->checkpoints_dir + "/" + name + ".target"};
  if (::mkdir(work.dir.c_str(), 0700) != 0) return errno_status(errno, what + ": mkdir " + work.dir);

  // CRIU freezes the container for the dump and lets it run on after (--leave-running). Killed at
  // the deadline (with CRIU, in its process group), it may leave the container frozen: thawed here.
  const auto started = std::chrono::steady_clock::now();
  auto dump = run_command({.argv = rt->argv({"checkpoint", "--leave-running", "--file-locks", "--image-path",
                                             work.dir + "/checkpoint", "--work-path", work.dir, id}),
                           .timeout = left()});
  if (!dump.ok() || !dump->success()) {
    thaw_if_paused(*rt, id, "its checkpoint failed");
    if (!dump.ok()) return dump.status().context(what);
    if (dump->timed_out)
      return deadline_exceeded(
          what + ": the dump did not finish in the timeout (" +
          std::to_string(timeout_seconds > 0 ? timeout_seconds : std::chrono::seconds(kDefaultTimeout).count()) +
          " s); the container runs on");
    std::string criu = criu_error_line(read_text_file(work.dir + "/dump.log"));
    std::string runtime_err = dump->err;
    while (!runtime_err.empty() && runtime_err.back() == '\n') runtime_err.pop_back();
    return internal_error(what + ": " + rt->binary() + " checkpoint: " + runtime_err +
                          (criu.empty() ? "" : " (criu: " + criu + ")") + "; the container runs on");
  }
  const auto dumped = std::chrono::steady_clock::now();
  // The log as the dump left it, at once: the container runs on, and what it prints from here a
  // restore prints again.
  std::error_code ec;
  if (!rec.log_path.empty() && fs::exists(rec.log_path, ec)) {
    fs::copy_file(rec.log_path, work.dir + "/container.log", ec);
    if (ec) return internal_error(what + ": copy the log " + rec.log_path + ": " + ec.message());
  }
  fault_point(FaultPoint::checkpoint_container_dumped);

  const std::string& helper = impl_->opt.checkpoint_archive_helper;
  if (Status s =
          run_archive_helper(helper, {"diff", c->upper, work.dir + "/rootfs-diff.tar", work.dir + "/deleted.files"},
                             left(), what + ": the writable layer's diff");
      !s.ok())
    return s;

  nlohmann::json config_dump = {{"id", id},
                                {"name", rec.name},
                                {"rootfsImage", config.image().image()},
                                {"rootfsImageRef", rec.image_ref},
                                {"rootfsImageName", config.image().image()},
                                {"runtime", c->runtime_handler.empty() ? rt->binary() : c->runtime_handler},
                                {"createdTime", rfc3339(rec.created_at)},
                                {"checkpointedTime", rfc3339(wall_clock_ns())},
                                {"restoredTime", "0001-01-01T00:00:00Z"},
                                {"restored", false}};
  // As containerd writes it (the CRI ContainerStatus with Go's JSON names): its restore reads the
  // labels, annotations, name and image back from it.
  v1::ContainerStatusResponse status;
  nlohmann::json status_dump = nlohmann::json::object();
  if (Status s = this->status(id, false, &status); s.ok()) {
    const auto& st = status.status();
    status_dump = {
        {"id", st.id()},
        {"metadata", {{"name", st.metadata().name()}, {"attempt", st.metadata().attempt()}}},
        {"state", static_cast<int>(st.state())},
        {"created_at", st.created_at()},
        {"started_at", st.started_at()},
        {"image", {{"image", st.image().image()}}},
        {"image_ref", st.image_ref()},
        {"labels", std::map<std::string, std::string>(st.labels().begin(), st.labels().end())},
        {"annotations", std::map<std::string, std::string>(st.annotations().begin(), st.annotations().end())},
        {"log_path", st.log_path()}};
  }
  // The spec as the runtime has it, with the annotations CRI-O's restore reads back from it (the
  // container's annotations, labels and metadata as JSON text, its pod and name).
  auto spec = oci::read_spec_file(c->bundle + "/config.json");
  if (!spec.ok()) return spec.status().context(what);
  auto& a = spec->annotations;
  a["io.kubernetes.cri-o.Annotations"] =
      nlohmann::json(std::map<std::string, std::string>(config.annotations().begin(), config.annotations().end()))
          .dump();
  a["io.kubernetes.cri-o.Labels"] =
      nlohmann::json(std::map<std::string, std::string>(config.labels().begin(), config.labels().end())).dump();
  a["io.kubernetes.cri-o.Metadata"] =
      nlohmann::json({{"name", config.metadata().name()}, {"attempt", config.metadata().attempt()}}).dump();
  a["io.kubernetes.cri-o.SandboxID"] = c->sandbox_id;
  a["io.kubernetes.cri-o.ContainerName"] = rec.name;
  for (const auto& [file, text] : {std::pair<std::string, std::string>{"config.dump", config_dump.dump(2)},
                                   {"status.dump", status_dump.dump()},
                                   {"spec.dump", oci::to_json(*spec).dump(2)},
                                   {"bind.mounts", bind_mounts_of(*spec).dump()}})
    if (Status s = write_file_atomically(work.dir + "/" + file, text, 0600, false); !s.ok()) return s.context(what);
  fault_point(FaultPoint::checkpoint_container_files_written);

  const std::string tmp = location + ".berth-checkpoint-" + new_object_id().substr(0, 12);
  if (Status s = write_file_atomically(work.marker, tmp, 0600, true); !s.ok()) return s.context(what);
  if (Status s = run_archive_helper(helper, {"pack", work.dir, tmp}, left(), what + ": the archive"); !s.ok()) return s;
  fault_point(FaultPoint::checkpoint_container_packed);
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, location.c_str(), RENAME_NOREPLACE) != 0)
    return errno_status(errno, what + ": rename the archive onto " + location,
                        errno == EEXIST ? Code::already_exists : Code::internal);
  ::unlink(work.marker.c_str());
  auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  spdlog::info("container {}: checkpointed into {} (dump {} ms, archive {} ms)", id, location, ms(dumped - started),
               ms(std::chrono::steady_clock::now() - dumped));
  return ok_status();
}

bool is_checkpoint_image(const std::map<std::string, std::string>& annotations) {
  // checkpointctl's current key, and the engines' older ones.
  for (const char* key : {"org.criu.checkpoint.container.name", "io.kubernetes.cri-o.annotations.checkpoint.name",
                          "io.kubernetes.containerd.annotations.checkpoint.name",
                          "checkpointctl.annotation.checkpoint.name", "io.podman.annotations.checkpoint.name"})
    if (annotations.count(key)) return true;
  return false;
}

Result<RestoreImport> import_checkpoint_image(const ContainerManager::Impl& impl, const std::string& image,
                                              const std::vector<std::string>& snapshot_dirs) {
  const std::string field = "config.image.image";
  // The layer that holds config.dump (the top one that does); its files, from a registry, are
  // repacked by the helper (regular files and directories only) and read as an archive would be.
  std::string holder;
  for (auto it = snapshot_dirs.rbegin(); it != snapshot_dirs.rend() && holder.empty(); ++it) {
    struct stat st {};
    if (::lstat((*it + "/config.dump").c_str(), &st) == 0) holder = *it;
  }
  if (holder.empty()) return invalid_argument(field + ": checkpoint image " + image + " holds no config.dump");
  if (!impl.opt.criu)
    return failed_precondition(field + ": " + image +
                               " is a checkpoint image, and checkpoint/restore is not configured in this berthd");
  if (Status s = impl.opt.criu->usable(); !s.ok()) return s.context(field + ": restore " + image);
  const std::string tar = impl.restores_dir + "/" + new_object_id().substr(0, 24) + ".tar";
  struct Remove {
    std::string path;
    ~Remove() { ::unlink(path.c_str()); }
  } remove{tar};
  if (Status s = run_archive_helper(impl.opt.checkpoint_archive_helper, {"pack", holder, tar}, kHelperTimeout,
                                    field + ": checkpoint image " + image);
      !s.ok())
    return s;
  return import_checkpoint(impl, tar);
}

std::optional<CriuProbeResult> ContainerManager::criu_status() const {
  if (!impl_->opt.criu) return std::nullopt;
  return impl_->opt.criu->result();
}

Result<RestoreImport> import_checkpoint(const ContainerManager::Impl& impl, const std::string& archive) {
  const std::string field = "config.image.image";
  if (!impl.opt.criu)
    return failed_precondition(field + ": " + archive +
                               " is a checkpoint archive, and checkpoint/restore is not configured in this berthd");
  if (Status s = impl.opt.criu->usable(); !s.ok()) return s.context(field + ": restore " + archive);
  struct stat st {};
  if (::stat(archive.c_str(), &st) != 0)
    return not_found(field + ": checkpoint archive " + archive + " does not exist");
  if (!S_ISREG(st.st_mode)) return invalid_argument(field + ": " + archive + " is not a file (a checkpoint archive)");
  RestoreImport imp;
  imp.dir = impl.restores_dir + "/" + new_object_id().substr(0, 24);
  if (::mkdir(imp.dir.c_str(), 0700) != 0) return errno_status(errno, "mkdir " + imp.dir);
  auto fail = [&](Status s) {
    (void)remove_tree(imp.dir);
    return s;
  };
  if (Status s = run_archive_helper(impl.opt.checkpoint_archive_helper,
                                    {"unpack", archive, imp.dir, std::to_string(free_bytes(impl.restores_dir))},
                                    kHelperTimeout, field + ": " + archive);
      !s.ok())
    return fail(s);
  auto text = read_file_bytes(imp.dir + "/config.dump");
  if (!text.ok()) return fail(invalid_argument(field + ": " + archive + " holds no config.dump"));
  auto cfg = parse_checkpoint_config(*text);
  if (!cfg.ok()) return fail(cfg.status().context(field + ": " + archive));
  if (::access((imp.dir + "/checkpoint/inventory.img").c_str(), F_OK) != 0)
    return fail(invalid_argument(field + ": " + archive + " holds no CRIU images (checkpoint/inventory.img)"));
  imp.base_image = cfg->base_image();
  if (imp.base_image.empty()) return fail(invalid_argument(field + ": " + archive + "'s config.dump names no image"));
  fault_point(FaultPoint::restore_archive_unpacked);
  return imp;
}

}  // namespace berth
