// Fuzz target: a layer blob, unpacked (image/layer_unpack.h) into a fresh directory beside an
// empty sibling. The first byte says how the rest becomes the blob: 0 as it is (tar, or anything
// libarchive detects), 1 gzip-compressed in one member (inflated whole with libdeflate where it is
// loaded), 2 gzip-compressed in two members (streamed by libarchive). Whatever the bytes, the
// unpack succeeds or fails with a message, and nothing lands outside its directory: the sibling
// stays empty (paths, hardlink targets and whiteouts that escape are refused). As root, like
// berth-pull's unpacker, and chrooted into the input's own directory, so that an escape the
// invariant misses still cannot write to the host.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <string>

#include "../../image/layer_unpack.h"
#include "../../image/pull_libraries.h"
#include "berth/file_tree.h"
#include "fuzz_support.h"

using namespace berth;

namespace {

namespace fs = std::filesystem;

// `raw` as one gzip member.
std::string gzip(const std::string& raw) {
  z_stream z{};
  if (deflateInit2(&z, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) abort();
  std::string out(deflateBound(&z, raw.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  FUZZ_CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// Runs `fn` with the process's root at `dir`, then returns to the real root (through a descriptor
// of it kept open: root may leave a chroot that way, which is the point here) and to the working
// directory libFuzzer's relative paths (corpus, artifacts) start from.
template <class F>
void chrooted(const std::string& dir, F fn) {
  static const int real_root = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const int cwd = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  FUZZ_CHECK(real_root >= 0 && cwd >= 0 && ::chroot(dir.c_str()) == 0 && ::chdir("/") == 0);
  fn();
  FUZZ_CHECK(::fchdir(real_root) == 0 && ::chroot(".") == 0 && ::fchdir(cwd) == 0);
  ::close(cwd);
}

}  // namespace

BERTH_FUZZ_TARGET(layer_unpack) {
  if (size < 1 || size > (1 << 20)) return 0;
  // libarchive and libdeflate are loaded before the chroot hides them.
  FUZZ_CHECK(pull_libraries(PullLibrary::archive).ok());
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string blob = rest;
  if (data[0] % 3 == 1) blob = gzip(rest);
  if (data[0] % 3 == 2) blob = gzip(rest.substr(0, rest.size() / 2)) + gzip(rest.substr(rest.size() / 2));

  char tmpl[] = "/tmp/berth-fuzz-layer-XXXXXX";
  if (!::mkdtemp(tmpl)) abort();
  const std::string dir = tmpl;
  fs::create_directory(dir + "/dest");
  fs::create_directory(dir + "/outside");
  {
    FILE* f = fopen((dir + "/blob").c_str(), "wb");
    if (!f || fwrite(blob.data(), 1, blob.size(), f) != blob.size() || fclose(f) != 0) abort();
  }
  Status s;
  chrooted(dir, [&] { s = unpack_layer("/blob", "/dest", "layer"); });
  if (!s.ok()) FUZZ_CHECK(!s.message().empty());
  FUZZ_CHECK(fs::is_empty(dir + "/outside"));
  FUZZ_CHECK(fs::is_directory(dir + "/dest") && !fs::is_symlink(dir + "/dest"));
  FUZZ_CHECK(remove_tree(dir).ok());
  return 0;
}
