// unpack_layer in this process on layers made here with tar and gzip: a gzip layer of one member
// (inflated whole with libdeflate where the node has it) and the same tar in two gzip members
// (which libarchive streams) give the same files, and so does a layer whose gzip trailer does not
// match its data: libdeflate refuses it and libarchive, which does not read the trailer, streams it
// as before. (A layer's bytes are vouched for by its sha256, checked before any unpack.)
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "../../image/layer_unpack.h"
#include "berth/test/temp_dir.h"

namespace berth {
namespace {

namespace fs = std::filesystem;
using test::read_file;
using test::TempDir;
using test::write_file;

int sh(const std::string& cmd) { return std::system(("set -e; " + cmd).c_str()); }

TEST(LayerUnpack, WholeAndStreamedInflateGiveTheSameFiles) {
  TempDir dir;
  const std::string d = dir.path();
  fs::create_directories(d + "/src/sub");
  write_file(d + "/src/a", "alpha\n");
  ASSERT_EQ(sh("head -c 1048576 /dev/urandom > " + d + "/src/sub/b && ln -s a " + d + "/src/c && tar -C " + d +
               "/src -cf " + d + "/layer.tar . && gzip -n -c " + d + "/layer.tar > " + d +
               "/one.gz && head -c 600000 " + d + "/layer.tar | gzip -n > " + d + "/p1 && tail -c +600001 " + d +
               "/layer.tar | gzip -n > " + d + "/p2 && cat " + d + "/p1 " + d + "/p2 > " + d + "/two.gz"),
            0);
  // The CRC in the trailer no longer matches the data.
  std::string bad = read_file(d + "/one.gz");
  bad[bad.size() - 8] = static_cast<char>(bad[bad.size() - 8] ^ 0x55);
  write_file(d + "/bad.gz", bad);
  for (const char* blob : {"one.gz", "two.gz", "bad.gz"}) {
    const std::string out = d + "/out-" + blob;
    fs::create_directory(out);
    Status s = unpack_layer(d + "/" + blob, out, blob);
    ASSERT_TRUE(s.ok()) << blob << ": " << s.message();
    EXPECT_EQ(read_file(out + "/a"), "alpha\n") << blob;
    EXPECT_EQ(read_file(out + "/sub/b"), read_file(d + "/src/sub/b")) << blob;
    EXPECT_TRUE(fs::is_symlink(out + "/c")) << blob;
  }
}

}  // namespace
}  // namespace berth
