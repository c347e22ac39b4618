// Fuzz target: what a restore reads of a checkpoint archive from anywhere. The first byte picks:
// 0 the rest is the archive, unpacked (image/checkpoint_archive.h) into a fresh directory beside an
// empty sibling, which must stay empty (only plain files and directories, beneath the destination,
// within the byte budget); 1 the rest is deleted.files, whose paths must come out relative and
// without ".."; 2 the rest is config.dump (container/checkpoint_config.h). Whatever the bytes, each
// succeeds or fails with a message.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "../../image/checkpoint_archive.h"
#include "berth/checkpoint_config.h"
#include "berth/file_tree.h"
#include "fuzz_support.h"

using namespace berth;

BERTH_FUZZ_TARGET(checkpoint_archive) {
  namespace fs = std::filesystem;
  if (size < 1 || size > (1 << 20)) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 3 == 1) {
    auto paths = parse_deleted_files(rest);
    if (!paths.ok()) {
      FUZZ_CHECK(!paths.status().message().empty());
      return 0;
    }
    for (const auto& p : *paths) {
      FUZZ_CHECK(!p.empty() && p.front() != '/');
      FUZZ_CHECK(p != ".." && p.rfind("../", 0) != 0 && p.find("/../") == std::string::npos);
    }
    return 0;
  }
  if (data[0] % 3 == 2) {
    auto c = parse_checkpoint_config(rest);
    if (!c.ok())
      FUZZ_CHECK(!c.status().message().empty());
    else
      FUZZ_CHECK(c->base_image().size() <= 4096);
    return 0;
  }
  char tmpl[] = "/tmp/berth-fuzz-checkpoint-XXXXXX";
  if (!::mkdtemp(tmpl)) abort();
  const std::string dir = tmpl;
  fs::create_directory(dir + "/dest");
  fs::create_directory(dir + "/outside");
  {
    FILE* f = fopen((dir + "/archive.tar").c_str(), "wb");
    if (!f || fwrite(rest.data(), 1, rest.size(), f) != rest.size() || fclose(f) != 0) abort();
  }
  Status s = unpack_checkpoint_archive(dir + "/archive.tar", dir + "/dest", 1 << 20);
  if (!s.ok()) FUZZ_CHECK(!s.message().empty());
  FUZZ_CHECK(fs::is_empty(dir + "/outside"));
  for (const auto& e : fs::recursive_directory_iterator(dir + "/dest"))
    FUZZ_CHECK(e.is_directory() || (e.is_regular_file() && !e.is_symlink()));
  FUZZ_CHECK(remove_tree(dir).ok());
  return 0;
}
