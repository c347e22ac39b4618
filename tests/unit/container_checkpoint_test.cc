// What berthd reads of CRIU and of checkpoint archives without the helper: criu --version's text,
// and config.dump (any origin: every field typed and bounded, the base image chosen as CRI-O does).
#include <gtest/gtest.h>

#include "berth/checkpoint_config.h"
#include "berth/criu_support.h"

namespace berth {
namespace {

TEST(CriuVersion, ReadsCriusOwnText) {
  std::string v;
  EXPECT_EQ(criu_version_number("Version: 3.17.1\n", &v), 31701);
  EXPECT_EQ(v, "3.17.1");
  EXPECT_EQ(criu_version_number("Version: 3.16\nGitID: v3.16\n", &v), 31600);
  EXPECT_EQ(v, "3.16");
  EXPECT_EQ(criu_version_number("Version: 4.0\n"), 40000);
  for (const char* bad : {"", "criu 3.17", "Version: x.y", "Version: 3"}) EXPECT_EQ(criu_version_number(bad), 0) << bad;
}

TEST(CheckpointConfig, TheBaseImageIsTheNameElseTheReference) {
  auto c = parse_checkpoint_config(
      R"({"id":"abc","name":"counter","rootfsImage":"reg/busybox:1","rootfsImageRef":"sha256:1234",
          "rootfsImageName":"reg/busybox:1","runtime":"runc","createdTime":"2026-12-07T00:00:00Z","restored":false})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->id, "abc");
  EXPECT_EQ(c->base_image(), "reg/busybox:1");
  c = parse_checkpoint_config(R"({"rootfsImageRef":"sha256:1234"})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->base_image(), "sha256:1234");
  c = parse_checkpoint_config(R"({"rootfsImage":"reg/b:2","rootfsImageName":null})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->base_image(), "reg/b:2");
}

TEST(CheckpointConfig, WhatIsNotSuchAnObjectIsRefusedNamingTheField) {
  for (const char* bad : {"", "[]", "not json", R"({"rootfsImageName": 7})", R"({"id": {}})"}) {
    auto c = parse_checkpoint_config(bad);
    EXPECT_EQ(c.status().code(), Code::invalid_argument) << bad;
    EXPECT_NE(c.status().message().find("config.dump"), std::string::npos) << c.status().message();
  }
  auto c = parse_checkpoint_config(R"({"rootfsImageName": ")" + std::string(5000, 'a') + "\"}");
  EXPECT_EQ(c.status().code(), Code::invalid_argument);
  EXPECT_NE(c.status().message().find("rootfsImageName"), std::string::npos) << c.status().message();
}

}  // namespace
}  // namespace berth
