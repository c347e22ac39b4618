// Fuzz target: berth.toml (server/config.cc, toml++): any text gives a Config or an
// INVALID_ARGUMENT naming the problem, never an exception, and a Config it gives is valid and can
// be shown as JSON exactly as the verbose RuntimeStatus shows it (server/runtime_status.cc) and as
// TOML (--print-config) that reads back to the same values.
#include "berth/config.h"
#include "fuzz_support.h"

using namespace berth;

BERTH_FUZZ_TARGET(config) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto c = parse_config(text, "/etc/berth/berth.toml");
  if (!c.ok()) {
    FUZZ_CHECK(c.status().code() == Code::invalid_argument);
    return 0;
  }
  FUZZ_CHECK(validate_config(*c).ok());
  FUZZ_CHECK(c->runtimes.count(c->default_runtime) == 1);
  // As runtime_status.cc does: a plain dump(), which throws on text that is not UTF-8.
  (void)config_to_json(*c).dump();
  // berthd --print-config: the printed TOML reads back to the same values.
  auto back = parse_config(config_to_toml(*c), "/etc/berth/berth.toml");
  FUZZ_CHECK(back.ok());
  FUZZ_CHECK(config_to_json(*back) == config_to_json(*c));
  return 0;
}
