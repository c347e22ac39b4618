// Every spec berth builds must read back as it was written: the typed spec's reader and writer
// (berth/oci_spec.h) are one pair, and a builder that writes what the reader does not keep (or
// the other way round) fails here.
#pragma once

#include <gtest/gtest.h>

#include "berth/oci_spec.h"

namespace berth::test {

inline void expect_spec_round_trip(const oci::Spec& built) {
  const nlohmann::json written = oci::to_json(built);
  auto back = oci::spec_from_json(written);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(oci::to_json(*back), written);
}

}  // namespace berth::test
