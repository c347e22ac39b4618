// libcurl and libarchive as tables of the functions berth calls, loaded at the first pull (see
// pull_libraries.cc for why). Their headers still give every type and constant.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>
#include <libdeflate.h>

#include "berth/status.h"

namespace berth {

struct CurlLibrary {
  decltype(&curl_easy_init) easy_init;
  decltype(&curl_easy_setopt) easy_setopt;
  decltype(&curl_easy_perform) easy_perform;
  decltype(&curl_easy_getinfo) easy_getinfo;
  decltype(&curl_easy_cleanup) easy_cleanup;
  decltype(&curl_easy_strerror) easy_strerror;
  decltype(&curl_slist_append) slist_append;
  decltype(&curl_slist_free_all) slist_free_all;
  decltype(&curl_share_init) share_init;
  decltype(&curl_share_setopt) share_setopt;
  decltype(&curl_share_cleanup) share_cleanup;
};

struct ArchiveLibrary {
  decltype(&archive_read_new) read_new;
  decltype(&archive_read_free) read_free;
  decltype(&archive_read_support_filter_gzip) read_support_filter_gzip;
  decltype(&archive_read_support_filter_zstd) read_support_filter_zstd;
  decltype(&archive_read_support_format_tar) read_support_format_tar;
  decltype(&archive_read_support_format_gnutar) read_support_format_gnutar;
  decltype(&archive_read_open_filename) read_open_filename;
  decltype(&archive_read_open_memory) read_open_memory;
  decltype(&archive_read_next_header) read_next_header;
  decltype(&archive_read_data_block) read_data_block;
  decltype(&archive_write_disk_new) write_disk_new;
  decltype(&archive_write_disk_set_options) write_disk_set_options;
  decltype(&archive_write_disk_set_standard_lookup) write_disk_set_standard_lookup;
  decltype(&archive_write_header) write_header;
  decltype(&archive_write_data_block) write_data_block;
  decltype(&archive_write_finish_entry) write_finish_entry;
  decltype(&archive_write_close) write_close;
  decltype(&archive_write_free) write_free;
  decltype(&archive_error_string) error_string;
  decltype(&archive_errno) errno_of;
  decltype(&archive_entry_pathname) entry_pathname;
  decltype(&archive_entry_set_pathname) entry_set_pathname;
  decltype(&archive_entry_hardlink) entry_hardlink;
  decltype(&archive_entry_set_hardlink) entry_set_hardlink;
  decltype(&archive_entry_size) entry_size;
};

// libdeflate inflates a whole gzip member about twice as fast as zlib, which libarchive streams
// through (busybox's layer: 5 against 10 ms here). Loaded with libarchive when the node has it
// (libdeflate0); without it, every layer streams through libarchive. Null until loaded.
struct DeflateLibrary {
  decltype(&libdeflate_alloc_decompressor) alloc_decompressor = nullptr;
  decltype(&libdeflate_gzip_decompress_ex) gzip_decompress_ex = nullptr;
  decltype(&libdeflate_free_decompressor) free_decompressor = nullptr;
};

struct PullLibraries {
  CurlLibrary curl;
  ArchiveLibrary archive;
  DeflateLibrary deflate;
};

// Which of the two a caller needs: berth-pull's fetcher maps only libcurl and its unpacker only
// libarchive (with the libraries each pulls in, ~40 for curl), so neither holds pages of the
// other's while it waits for the next pull.
enum class PullLibrary { curl = 1, archive = 2, both = 3 };

// Loads the libraries asked for (and runs curl_global_init) on the first call that asks for them;
// later calls return the same tables, whose other half is null until loaded. Thread-safe. A
// failure (a library missing) is returned, and the next call tries again.
Result<const PullLibraries*> pull_libraries(PullLibrary which = PullLibrary::both);

}  // namespace berth
