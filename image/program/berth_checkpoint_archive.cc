// berth-checkpoint-archive: the tar work of CheckpointContainer and of a restore, which berthd runs
// here so that it never maps libarchive nor reads an archive it did not write (checkpoint_archive.h).
// Reading an outside archive (unpack, apply) happens confined as berth-pull's unpacker is: no
// network, only the capabilities that write files, no new privileges, the seccomp filter.
//   berth-checkpoint-archive pack <dir> <out>
//   berth-checkpoint-archive diff <upper> <out-tar> <out-deleted-json>
//   berth-checkpoint-archive unpack <archive> <dest> <max-bytes>
//   berth-checkpoint-archive apply <diff-tar|-> <deleted-json|-> <upper>
// Exit status: 0 done, 2 the input is refused, 3 out of space, 1 anything else; the reason on stderr.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "berth/atomic_file.h"
#include "berth/inherited_fds.h"
#include "checkpoint_archive.h"
#include "pull_confinement.h"

namespace {

int report(const berth::Status& s) {
  if (s.ok()) return 0;
  std::fprintf(stderr, "%s\n", s.message().c_str());
  if (s.code() == berth::Code::invalid_argument) return 2;
  if (s.code() == berth::Code::resource_exhausted) return 3;
  return 1;
}

std::string arg_or_none(const char* a) { return std::string(a) == "-" ? std::string() : std::string(a); }

}  // namespace

int main(int argc, char** argv) {
  berth::mark_descriptors_cloexec_from(3);
  const std::string op = argc > 1 ? argv[1] : "";
  if (op == "pack" && argc == 4) return report(berth::pack_checkpoint_archive(argv[2], argv[3]));
  if (op == "diff" && argc == 5) {
    auto diff = berth::write_rootfs_diff(argv[2], argv[3]);
    if (!diff.ok()) return report(diff.status());
    return report(berth::write_file_atomically(argv[4], nlohmann::json(diff->deleted).dump(), 0600, false));
  }
  if (op == "unpack" && argc == 5) {
    char* end = nullptr;
    unsigned long long max = std::strtoull(argv[4], &end, 10);
    if (!end || *end) return report(berth::invalid_argument(std::string("max-bytes: ") + argv[4] + " is not a number"));
    if (auto s = berth::confine_unpacker(); !s.ok()) return report(s);
    return report(berth::unpack_checkpoint_archive(argv[2], argv[3], max));
  }
  if (op == "apply" && argc == 5) {
    if (auto s = berth::confine_unpacker(); !s.ok()) return report(s);
    return report(berth::apply_rootfs_diff(arg_or_none(argv[2]), arg_or_none(argv[3]), argv[4]));
  }
  std::fprintf(stderr, "usage: berth-checkpoint-archive pack|diff|unpack|apply ...\n");
  return 1;
}
