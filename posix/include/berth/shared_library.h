// SharedLibrary: a library loaded with dlopen at the first use of what it does, its functions bound
// by symbol into a caller's table of pointers (decltype of the header's own declarations, so the
// header still gives every type). For libraries whose code berthd runs rarely or only on some
// nodes (libcurl and libarchive for pulls, libsystemd for the systemd cgroup driver), so the rest
// do not map them (README "Memory").
#pragma once

#include <string>

namespace berth {

class SharedLibrary {
 public:
  explicit SharedLibrary(const char* soname);
  template <class F>
  void bind(F& fn, const char* symbol) {
    fn = reinterpret_cast<F>(find(symbol));
  }
  // The first error (the library missing, a symbol not found), after which the library is closed
  // again; empty when every symbol was found, and then the library stays loaded for good.
  std::string finish();

 private:
  void* find(const char* symbol);
  const char* soname_;
  void* handle_;
  std::string error_;
};

}  // namespace berth
