// See shared_library.h. RTLD_LOCAL: the library's symbols stay out of the global namespace, so
// nothing else berthd loads resolves against them by accident.
#include "berth/shared_library.h"

#include <dlfcn.h>

namespace berth {

SharedLibrary::SharedLibrary(const char* soname) : soname_(soname), handle_(::dlopen(soname, RTLD_NOW | RTLD_LOCAL)) {
  if (!handle_) error_ = ::dlerror();
}

void* SharedLibrary::find(const char* symbol) {
  if (!handle_) return nullptr;
  void* fn = ::dlsym(handle_, symbol);
  if (!fn && error_.empty()) error_ = std::string(soname_) + ": no symbol " + symbol;
  return fn;
}

std::string SharedLibrary::finish() {
  if (!error_.empty() && handle_) ::dlclose(handle_);
  return error_;
}

}  // namespace berth
