// The fuzz harnesses (tests/fuzz) outside libFuzzer: every harness replays its whole seed corpus,
// regression inputs included, in the normal build, and each crash the fuzzers found that berth
// fixed has a test here feeding that input to the parser and checking the clean error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "berth/checksummed_json.h"
#include "berth/config.h"
#include "berth/container_record.h"
#include "cri_log_line.h"
#include "flat_json.h"
#include "fuzz_support.h"

// clang-format wraps this X-macro list differently on each pass.
// clang-format off
#define BERTH_FUZZ_HARNESS_LIST(X)                                                                            \
  X(spdy_frame) X(spdy_headers) X(spdy_session) X(websocket) X(http_upgrade) X(image_reference) X(manifest) \
  X(www_authenticate) X(cni_result) X(config) X(records) X(monitor_protocol) X(exit_record) X(cri_log)      \
  X(cgroup_files) X(cdi) X(pull_worker) X(exec_request) X(traceparent) X(registry_auth) X(image_signature) \
  X(layer_unpack) X(nri_wire) X(checkpoint_archive)
// clang-format on

#define BERTH_DECLARE_HARNESS(name) int berth_fuzz_##name(const uint8_t* data, size_t size);
BERTH_FUZZ_HARNESS_LIST(BERTH_DECLARE_HARNESS)

namespace {

namespace fs = std::filesystem;

struct Harness {
  const char* name;
  int (*run)(const uint8_t*, size_t);
};

#define BERTH_HARNESS_ENTRY(name) Harness{#name, berth_fuzz_##name},
const Harness kHarnesses[] = {BERTH_FUZZ_HARNESS_LIST(BERTH_HARNESS_ENTRY)};

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

int run(const Harness& h, const std::string& bytes) {
  return h.run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

class FuzzCorpus : public testing::TestWithParam<Harness> {};

TEST_P(FuzzCorpus, EverySeedRunsClean) {
  fs::path dir = fs::path(BERTH_FUZZ_CORPUS) / GetParam().name;
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  EXPECT_FALSE(files.empty()) << dir;
  // A harness that finds a broken invariant aborts, naming it; a clean run returns 0.
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    EXPECT_EQ(run(GetParam(), read_bytes(f)), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Harnesses, FuzzCorpus, testing::ValuesIn(kHarnesses),
                         [](const testing::TestParamInfo<Harness>& info) { return std::string(info.param.name); });

TEST(FuzzCorpus, EveryCorpusHasAHarness) {
  for (const auto& e : fs::directory_iterator(BERTH_FUZZ_CORPUS)) {
    std::string name = e.path().filename().string();
    bool known =
        std::any_of(std::begin(kHarnesses), std::end(kHarnesses), [&](const Harness& h) { return name == h.name; });
    EXPECT_TRUE(known) << "corpus " << name << " has no harness in unit_fuzz_regressions";
  }
}

// The findings of tests/fuzz/FINDINGS.md, each fed to the parser the fuzzer found it in.

// F1: a table header with no key ("[" then a newline, '#' or NUL) trips an assertion inside
// toml++ 3.3.0; berth must answer with the parser's error.
TEST(FuzzFindings, F1_TableHeaderWithoutKeyIsAConfigError) {
  for (std::string text : {std::string("[\n"), std::string("[\0", 2), std::string("[#x\n"), std::string("[[\n")}) {
    auto c = berth::parse_config(text, "berth.toml");
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), berth::Code::invalid_argument);
  }
}

// F2: a line of line_max + 1 bytes whose '\n' arrives in the same read was handed on whole, too
// long for the monitor's line buffer, and so dropped from the CRI log.
TEST(FuzzFindings, F2_LineOneOverLineMaxIsCutNotLost) {
  struct Rec {
    bool partial;
    std::string text;
  };
  std::vector<Rec> recs;
  char storage[8];
  berth::CriLineSplitter s(
      storage, 4,
      [](void* ctx, bool partial, const char* d, size_t n) {
        static_cast<std::vector<Rec>*>(ctx)->push_back({partial, std::string(d, n)});
      },
      &recs);
  s.feed("abcde\n", 6);
  s.finish();
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_TRUE(recs[0].partial);
  EXPECT_EQ(recs[0].text, "abcd");
  EXPECT_FALSE(recs[1].partial);
  EXPECT_EQ(recs[1].text, "e");
  char line[4 + berth::kCriLogHeaderMax];
  for (const auto& r : recs)
    EXPECT_GT(berth::format_cri_log_line(0, "stdout", r.partial, r.text.data(), r.text.size(), line, sizeof line), 0u);
}

// F3: a string whose last \u escape is cut short left the output without its NUL, so the
// runtime's last error message showed the tail of an earlier, longer one.
TEST(FuzzFindings, F3_CutUnicodeEscapeStillTerminates) {
  std::string line = R"({"level":"fatal","msg":"exec failed\u00"})";
  berth::JsonField msg;
  ASSERT_TRUE(berth::find_json_field(line.data(), line.size(), "msg", &msg) && msg.is_string);
  char out[64];
  memset(out, 'x', sizeof out);
  size_t n = berth::json_string_value(msg, out, sizeof out);
  EXPECT_EQ(std::string(out, n), "exec failed");
  EXPECT_EQ(out[n], 0);
}

// F4, F6, F7: toml++ 3.3.0 runs into __builtin_unreachable when it asks whether a character of
// U+00A1..U+0499 or U+FB06..U+FEFE is whitespace (outside a string, or after a line-ending
// backslash). Behaves in GCC builds by luck; the fuzz build (UBSan) shows it. Such a file must be
// a plain config error, and non-ASCII where TOML allows it (strings, comments) must still parse.
TEST(FuzzFindings, F4_NonAsciiOutsideStringsIsAConfigError) {
  for (std::string text :
       {std::string("\xc3\xa9 = 1\n"), std::string("log_level = \"info\" \xcf\xbb\n"), std::string("\xef\xac\xbf"),
        std::string("a.'''x\xd2\x8a|sub"), std::string("log_level = \"\"\"\\\n  \xc3\xa9\"\"\"\n"),
        std::string("root = \"/var/lib/berth\"\xc2\xa1\n")}) {
    auto c = berth::parse_config(text, "berth.toml");
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_EQ(c.status().code(), berth::Code::invalid_argument);
    EXPECT_NE(c.status().message().find("berth.toml"), std::string::npos) << c.status().message();
  }
  auto c =
      berth::parse_config("# caf\xc3\xa9 \xcf\xbb\nroot = \"/var/lib/b\xc3\xa9rth\"\t# \xef\xbb\xbf\n", "berth.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->root, "/var/lib/b\xc3\xa9rth");
}

// F5: a record whose checksum matches but which holds a float (or a number out of range) where
// an integer belongs was converted unchecked; it must be refused like any malformed record.
TEST(FuzzFindings, F5_FloatInIntegerFieldIsRefused) {
  berth::ContainerRecord r;
  r.id = "c1";
  std::string dir = berth::fuzz::scratch_dir();
  ASSERT_TRUE(berth::write_container_record(dir, r).ok());
  std::string path = berth::container_record_path(dir, "c1");
  auto j = nlohmann::json::parse(read_bytes(path));
  for (const char* key : {"state", "pid", "attempt"}) {
    auto bad = j;
    bad[key] = 1e300;
    ASSERT_TRUE(berth::write_checksummed_json(path, bad, "test record").ok());
    auto read = berth::read_container_record(path);
    ASSERT_FALSE(read.ok()) << key;
    EXPECT_EQ(read.status().code(), berth::Code::invalid_argument) << key;
  }
}

}  // namespace
