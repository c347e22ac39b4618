// Small readers for the formats cgroupfs and procfs files use: one number, "max", and "key value" lists.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace berth::kernel_files {

// The whole file, or nullopt when it cannot be opened (errno left set).
std::optional<std::string> read_text(const std::string& path);
// A single unsigned number; "max" reads as UINT64_MAX.
std::optional<uint64_t> read_u64(const std::string& path);
// "key value" per line (memory.stat, cpu.stat).
std::map<std::string, uint64_t> read_key_values(const std::string& path);

}  // namespace berth::kernel_files
