// What every fuzz target shares: the entry macro (libFuzzer's entry in the fuzz build, a plain
// function for the corpus replay in unit_fuzz_regressions), an input reader, and FUZZ_CHECK for
// the invariants a target asserts beyond "no sanitizer report".
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

// BERTH_FUZZ_TARGET(name) { body using data, size } defines berth_fuzz_<name>; in the fuzz build
// (no BERTH_FUZZ_REPLAY) it is also the binary's LLVMFuzzerTestOneInput.
#ifdef BERTH_FUZZ_REPLAY
#define BERTH_FUZZ_ENTRY(name)
#else
#define BERTH_FUZZ_ENTRY(name) \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return berth_fuzz_##name(data, size); }
#endif
#define BERTH_FUZZ_TARGET(name)                            \
  int berth_fuzz_##name(const uint8_t* data, size_t size); \
  BERTH_FUZZ_ENTRY(name)                                   \
  int berth_fuzz_##name(const uint8_t* data, size_t size)

// An invariant broken is a finding like a sanitizer report: say which and abort (libFuzzer saves
// the input; the replay test dies with the message).
#define FUZZ_CHECK(cond)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                          \
    }                                                                                   \
  } while (0)

// A finding reported but not fixed yet (its code is outside tests/fuzz, see FINDINGS.md): the
// harness steps around inputs of that shape so fuzzing goes on past it. Remove with the fix.
#define FUZZ_KNOWN_FINDING(id, cond) (cond)

namespace berth::fuzz {

// Reads fd until EOF or an error (a non-blocking socket's EAGAIN), throwing the bytes away.
inline void drain(int fd) {
  char buf[65536];
  while (read(fd, buf, sizeof buf) > 0) {
  }
}

// Reads an input from the front: single bytes steer the target (mode, split points), take()
// cuts pieces; past the end everything is zero or empty, so every input is a valid program.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : p_(reinterpret_cast<const char*>(data)), n_(size) {}
  bool empty() const { return n_ == 0; }
  size_t left() const { return n_; }
  uint8_t byte() {
    if (n_ == 0) return 0;
    --n_;
    return static_cast<uint8_t>(*p_++);
  }
  uint16_t u16() { return static_cast<uint16_t>(byte() << 8 | byte()); }
  std::string_view take(size_t n) {
    if (n > n_) n = n_;
    std::string_view out(p_, n);
    p_ += n;
    n_ -= n;
    return out;
  }
  std::string_view rest() { return take(n_); }
  // A piece whose length (0..max) is the next byte or two.
  std::string_view piece(size_t max) {
    size_t n = max < 256 ? byte() : u16();
    return take(max == 0 ? 0 : n % (max + 1));
  }

 private:
  const char* p_;
  size_t n_;
};

// A private directory for targets that must hand a parser a file, made once per process and
// removed at exit.
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    // tmpfs where there is one: records written here are fsync'd, which costs nothing there.
    std::string tmpl = access("/dev/shm", W_OK) == 0 ? "/dev/shm/berth-fuzz-XXXXXX" : "/tmp/berth-fuzz-XXXXXX";
    if (!mkdtemp(tmpl.data())) {
      perror("mkdtemp");
      abort();
    }
    static std::string made = tmpl;
    atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(made, ignored);
    });
    return made;
  }();
  return dir;
}

// Writes bytes to path (truncating); aborts on failure, which is the harness's, not a finding.
inline void write_file(const std::string& path, std::string_view bytes) {
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) {
    perror(path.c_str());
    abort();
  }
  if (!bytes.empty() && fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) abort();
  fclose(f);
}

}  // namespace berth::fuzz
