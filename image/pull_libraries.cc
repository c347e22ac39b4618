// libcurl and libarchive are dlopen()ed at the first pull instead of linked: with what Debian
// builds them against (OpenSSL, gnutls, krb5, ldap, ssh2, rtmp, libxml2, icu...) they were ~40
// shared libraries and ~6 MiB of berthd's idle RSS, for code that only runs during a pull. Once
// loaded they stay (OpenSSL pins itself; curl's resolver threads may outlive a transfer). The
// sonames match the headers berth compiles against (Debian 12: libcurl4, libarchive13, and
// libdeflate0, which is optional: layers inflate faster with it).
#include "pull_libraries.h"

#include <mutex>

#include "berth/mutex.h"
#include "berth/shared_library.h"

namespace berth {

namespace {

constexpr const char* kCurlSoname = "libcurl.so.4";
constexpr const char* kArchiveSoname = "libarchive.so.13";
constexpr const char* kDeflateSoname = "libdeflate.so.0";
static_assert(LIBCURL_VERSION_MAJOR == 7 || LIBCURL_VERSION_MAJOR == 8, "libcurl.so.4 is curl 7 and 8");
static_assert(ARCHIVE_VERSION_NUMBER >= 3000000 && ARCHIVE_VERSION_NUMBER < 4000000,
              "libarchive.so.13 is libarchive 3");

std::string load_curl(CurlLibrary& c) {
  SharedLibrary b(kCurlSoname);
  decltype(&curl_global_init) global_init;
  b.bind(global_init, "curl_global_init");
  b.bind(c.easy_init, "curl_easy_init");
  b.bind(c.easy_setopt, "curl_easy_setopt");
  b.bind(c.easy_perform, "curl_easy_perform");
  b.bind(c.easy_getinfo, "curl_easy_getinfo");
  b.bind(c.easy_cleanup, "curl_easy_cleanup");
  b.bind(c.easy_strerror, "curl_easy_strerror");
  b.bind(c.slist_append, "curl_slist_append");
  b.bind(c.slist_free_all, "curl_slist_free_all");
  b.bind(c.share_init, "curl_share_init");
  b.bind(c.share_setopt, "curl_share_setopt");
  b.bind(c.share_cleanup, "curl_share_cleanup");
  std::string error = b.finish();
  if (error.empty() && global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) error = "curl_global_init failed";
  return error;
}

std::string load_archive(ArchiveLibrary& a) {
  SharedLibrary b(kArchiveSoname);
  b.bind(a.read_new, "archive_read_new");
  b.bind(a.read_free, "archive_read_free");
  b.bind(a.read_support_filter_gzip, "archive_read_support_filter_gzip");
  b.bind(a.read_support_filter_zstd, "archive_read_support_filter_zstd");
  b.bind(a.read_support_format_tar, "archive_read_support_format_tar");
  b.bind(a.read_support_format_gnutar, "archive_read_support_format_gnutar");
  b.bind(a.read_open_filename, "archive_read_open_filename");
  b.bind(a.read_open_memory, "archive_read_open_memory");
  b.bind(a.read_next_header, "archive_read_next_header");
  b.bind(a.read_data_block, "archive_read_data_block");
  b.bind(a.write_disk_new, "archive_write_disk_new");
  b.bind(a.write_disk_set_options, "archive_write_disk_set_options");
  b.bind(a.write_disk_set_standard_lookup, "archive_write_disk_set_standard_lookup");
  b.bind(a.write_header, "archive_write_header");
  b.bind(a.write_data_block, "archive_write_data_block");
  b.bind(a.write_finish_entry, "archive_write_finish_entry");
  b.bind(a.write_close, "archive_write_close");
  b.bind(a.write_free, "archive_write_free");
  b.bind(a.error_string, "archive_error_string");
  b.bind(a.errno_of, "archive_errno");
  b.bind(a.entry_pathname, "archive_entry_pathname");
  b.bind(a.entry_set_pathname, "archive_entry_set_pathname");
  b.bind(a.entry_hardlink, "archive_entry_hardlink");
  b.bind(a.entry_set_hardlink, "archive_entry_set_hardlink");
  b.bind(a.entry_size, "archive_entry_size");
  return b.finish();
}

// Optional: a node without libdeflate0 unpacks every layer through libarchive's zlib.
void load_deflate(DeflateLibrary& d) {
  SharedLibrary b(kDeflateSoname);
  DeflateLibrary found;
  b.bind(found.alloc_decompressor, "libdeflate_alloc_decompressor");
  b.bind(found.gzip_decompress_ex, "libdeflate_gzip_decompress_ex");
  b.bind(found.free_decompressor, "libdeflate_free_decompressor");
  if (b.finish().empty()) d = found;
}

}  // namespace

Result<const PullLibraries*> pull_libraries(PullLibrary which) {
  static Mutex mu;
  static PullLibraries libs;
  static bool curl_loaded = false, archive_loaded = false;
  MutexLock lock(mu);
  const bool want_curl = (static_cast<int>(which) & static_cast<int>(PullLibrary::curl)) != 0;
  const bool want_archive = (static_cast<int>(which) & static_cast<int>(PullLibrary::archive)) != 0;
  if (want_curl && !curl_loaded) {
    if (std::string e = load_curl(libs.curl); !e.empty()) return failed_precondition("image pulls need libcurl: " + e);
    curl_loaded = true;
  }
  if (want_archive && !archive_loaded) {
    if (std::string e = load_archive(libs.archive); !e.empty())
      return failed_precondition("image pulls need libarchive: " + e);
    load_deflate(libs.deflate);
    archive_loaded = true;
  }
  return &libs;
}

}  // namespace berth
