// Drop-in files (<main>.d/*.toml): merge order, table merge, errors naming file and key; and the
// printed effective configuration reading back to the same values.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include "berth/config.h"
#include "berth/test/temp_dir.h"

namespace berth {
namespace {

class DropIns : public ::testing::Test {
 protected:
  void SetUp() override { ::mkdir(drop_in_dir().c_str(), 0755); }
  std::string main_file() const { return dir_ / "berth.toml"; }
  std::string drop_in_dir() const { return main_file() + ".d"; }
  std::string drop_in(const std::string& name, const std::string& text) const {
    std::string path = drop_in_dir() + "/" + name;
    test::write_file(path, text);
    return path;
  }
  test::TempDir dir_;
};

TEST_F(DropIns, DirIsNextToTheMainFile) {
  EXPECT_EQ(config_drop_in_dir(""), "/etc/berth/berth.toml.d");
  EXPECT_EQ(config_drop_in_dir("/x/y.toml"), "/x/y.toml.d");
}

TEST_F(DropIns, LaterFilesWinInLexicalOrder) {
  test::write_file(main_file(), "log_level = \"warn\"\nmax_concurrent_rpcs = 64\n");
  std::string b = drop_in("20-b.toml", "log_level = \"error\"\n");
  std::string a = drop_in("10-a.toml", "log_level = \"debug\"\nshutdown_timeout_seconds = 3\n");
  drop_in("30-ignored.conf", "log_level = \"trace\"\n");  // not *.toml
  drop_in(".hidden.toml", "log_level = \"trace\"\n");
  auto c = load_config(main_file());
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->log_level, "error");
  EXPECT_EQ(c->shutdown_timeout_seconds, 3);
  EXPECT_EQ(c->max_concurrent_rpcs, 64);
  EXPECT_EQ(c->files, (std::vector<std::string>{main_file(), a, b}));
  EXPECT_EQ(c->source, main_file());
  EXPECT_EQ(config_key_origin(*c, "log_level"), b);
  EXPECT_EQ(config_key_origin(*c, "shutdown_timeout_seconds"), a);
  EXPECT_EQ(config_key_origin(*c, "max_concurrent_rpcs"), main_file());
}

TEST_F(DropIns, TablesMergeKeyByKey) {
  test::write_file(main_file(), R"(
[registries."registry.example"]
mirrors = ["http://127.0.0.1:5000"]
ca_file = "/etc/ssl/example.pem"
[runtimes.crun]
path = "/usr/bin/crun"
)");
  drop_in("10-insecure.toml",
          "[registries.\"registry.example\"]\ninsecure = true\n[registries.\"other.example\"]\nmirrors = []\n");
  drop_in("20-crun-root.toml", "default_runtime = \"crun\"\n[runtimes.crun]\nroot = \"/run/crun\"\n");
  auto c = load_config(main_file());
  ASSERT_TRUE(c.ok()) << c.status().message();
  const auto& r = c->registries.at("registry.example");
  EXPECT_EQ(r.mirrors, std::vector<std::string>{"http://127.0.0.1:5000"});
  EXPECT_TRUE(r.insecure);
  EXPECT_EQ(r.ca_file, "/etc/ssl/example.pem");
  EXPECT_TRUE(c->registries.count("other.example"));
  EXPECT_EQ(c->runtimes.at("crun").path, "/usr/bin/crun");
  EXPECT_EQ(c->runtimes.at("crun").root, "/run/crun");
  EXPECT_EQ(c->default_runtime, "crun");
}

TEST_F(DropIns, ArraysAreReplacedWhole) {
  drop_in("10.toml", "cni_plugin_dirs = [\"/usr/lib/cni\"]\n");
  auto c = load_config(dir_ / "absent-main.toml");
  ASSERT_FALSE(c.ok());  // an explicit main file must exist
  test::write_file(main_file(), "cni_plugin_dirs = [\"/a\", \"/b\"]\n");
  c = load_config(main_file());
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->cni_plugin_dirs, std::vector<std::string>{"/usr/lib/cni"});
}

TEST_F(DropIns, ARuleAcrossFilesIsCheckedAfterTheMerge) {
  // default_runtime names a handler only a later drop-in defines: valid once merged.
  test::write_file(main_file(), "default_runtime = \"crun\"\n");
  drop_in("10.toml", "[runtimes.crun]\n");
  EXPECT_TRUE(load_config(main_file()).ok());
}

TEST_F(DropIns, ErrorsNameTheDropInAndTheKey) {
  test::write_file(main_file(), "log_level = \"info\"\n");
  drop_in("10-ok.toml", "shutdown_timeout_seconds = 5\n");
  std::string bad = drop_in("20-bad.toml", "[registries.\"r.example\"]\nmirors = [\"x\"]\n");
  auto c = load_config(main_file());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::invalid_argument);
  EXPECT_NE(c.status().message().find("config " + bad + ": unknown key 'registries.r.example.mirors'"),
            std::string::npos)
      << c.status().message();

  test::write_file(bad, "max_image_layers = 0\n");
  c = load_config(main_file());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("config " + bad + ": key 'max_image_layers': must be between 1 and 500"),
            std::string::npos)
      << c.status().message();

  test::write_file(bad, "log_level = \n");
  c = load_config(main_file());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("config " + bad + ": line 1"), std::string::npos) << c.status().message();
}

TEST_F(DropIns, ACrossKeyErrorNamesTheFileThatSetTheKey) {
  test::write_file(main_file(), "[runtimes.crun]\n");
  std::string bad = drop_in("50-default.toml", "default_runtime = \"kata\"\n");
  drop_in("60-other.toml", "log_level = \"debug\"\n");
  auto c = load_config(main_file());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(
      c.status().message().find("config " + bad + ": key 'default_runtime': \"kata\" is not a configured runtime"),
      std::string::npos)
      << c.status().message();
  std::string rel = drop_in("70-root.toml", "default_runtime = \"runc\"\n[runtimes.runc]\nroot = \"relative\"\n");
  c = load_config(main_file());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("config " + rel + ": key 'runtimes.runc.root'"), std::string::npos)
      << c.status().message();
}

TEST_F(DropIns, DropInsApplyWithoutAMainFileWhenNoneWasAskedFor) {
  // load_config("") reads /etc/berth/berth.toml.d: only the explicit form can be tested here.
  drop_in("10.toml", "log_level = \"warn\"\n");
  test::write_file(main_file(), "");
  auto c = load_config(main_file());
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->log_level, "warn");
}

TEST(ConfigToml, PrintedConfigReadsBackToTheSameValues) {
  auto c = parse_config(R"(
log_level = "debug"
metrics_address = "127.0.0.1:9464"
cni_plugin_dirs = ["/opt/cni/bin", "/usr/lib/cni", "/with \"quotes\"\\and\tcontrol"]
sandbox_image = "registry.k8s.io/pause:3.9"
[registries."127.0.0.1:5000"]
mirrors = ["http://127.0.0.1:5001"]
insecure = true
[registries."registry.k8s.io"]
ca_file = "/etc/ssl/k8s.pem"
[runtimes.crun]
path = "/usr/bin/crun"
[runtimes."odd name"]
path = "runsc"
)",
                        "/etc/berth/berth.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  std::string text = config_to_toml(*c);
  EXPECT_NE(text.find("log_level = \"debug\"  # /etc/berth/berth.toml\n"), std::string::npos) << text;
  EXPECT_NE(text.find("socket = \"/run/berth/berth.sock\"\n"), std::string::npos) << text;  // a default: no comment
  EXPECT_NE(text.find("[registries.\"127.0.0.1:5000\"]"), std::string::npos) << text;
  auto back = parse_config(text, "/etc/berth/berth.toml");
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << text;
  EXPECT_EQ(config_to_json(*back), config_to_json(*c)) << text;
}

TEST(ConfigToml, DefaultsPrintAndReadBack) {
  Config d;
  auto back = parse_config(config_to_toml(d), "printed");
  ASSERT_TRUE(back.ok()) << back.status().message();
  back->source = d.source;
  back->files = d.files;
  EXPECT_EQ(config_to_json(*back), config_to_json(d));
}

}  // namespace
}  // namespace berth
