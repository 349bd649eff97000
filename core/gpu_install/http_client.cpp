#include "http_client.h"

#include <cstdio>
#include <curl/curl.h>
#include <memory>

#include "core/system/user_error.h"

namespace normlab {

namespace {

// curl_global_init is not thread-safe: done once, before the first handle.
CURL* new_handle() {
  static const bool initialised = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  CURL* curl = initialised ? curl_easy_init() : nullptr;
  if (!curl) throw UserError("cannot start an HTTP client (libcurl)");
  return curl;
}

using Handle = std::unique_ptr<CURL, decltype(&curl_easy_cleanup)>;
using HeaderList = std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)>;

void common_options(CURL* curl, const std::string& url, char* error) {
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);  // the index points at a file host
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 30L);
  // A connection that delivers under 1 kB/s for a minute has dropped: fail, keep what came.
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "normlab");
}

std::string failure(const std::string& url, CURLcode code, const char* error) {
  return "cannot fetch " + url + ": " + (error[0] ? std::string(error) : curl_easy_strerror(code));
}

long status_of(CURL* curl) {
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  return status;
}

size_t append_to_string(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

struct Download {
  CURL* curl;
  std::FILE* out = nullptr;
  std::filesystem::path file;
  std::int64_t resumed_from = 0;
  bool checked_status = false;
  const DownloadProgress* progress;
  bool stopped = false;
};

// The first body bytes say whether the server honoured the range: 206 appends to what we
// have, 200 is the whole file again.
size_t write_to_file(char* data, size_t size, size_t count, void* state) {
  auto& d = *static_cast<Download*>(state);
  if (!d.checked_status) {
    d.checked_status = true;
    const long status = status_of(d.curl);
    if (status >= 400) return 0;  // fails the transfer; the status is reported after
    const bool appending = d.resumed_from > 0 && status == 206;
    d.out = std::fopen(d.file.c_str(), appending ? "ab" : "wb");
    if (!d.out) return 0;
    if (!appending) d.resumed_from = 0;
  }
  return std::fwrite(data, size, count, d.out) * size;
}

int report(void* state, curl_off_t total, curl_off_t now, curl_off_t, curl_off_t) {
  auto& d = *static_cast<Download*>(state);
  const std::int64_t whole = total > 0 ? d.resumed_from + total : 0;
  if (*d.progress && !(*d.progress)(d.resumed_from + now, whole)) {
    d.stopped = true;
    return 1;
  }
  return 0;
}

}  // namespace

std::string http_get(const std::string& url, const std::vector<std::string>& headers) {
  Handle curl(new_handle(), curl_easy_cleanup);
  char error[CURL_ERROR_SIZE] = {};
  common_options(curl.get(), url, error);
  HeaderList list(nullptr, curl_slist_free_all);
  for (const auto& header : headers) list.reset(curl_slist_append(list.release(), header.c_str()));
  curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, list.get());
  std::string body;
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, append_to_string);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &body);
  const CURLcode code = curl_easy_perform(curl.get());
  if (code != CURLE_OK) throw UserError(failure(url, code, error));
  if (const long status = status_of(curl.get()); status >= 400) {
    throw UserError("cannot fetch " + url + ": the server answered " + std::to_string(status));
  }
  return body;
}

bool http_download(const std::string& url, const std::filesystem::path& file, const DownloadProgress& progress) {
  Handle curl(new_handle(), curl_easy_cleanup);
  char error[CURL_ERROR_SIZE] = {};
  common_options(curl.get(), url, error);
  std::error_code ignored;
  const auto have = std::filesystem::exists(file, ignored) ? std::filesystem::file_size(file, ignored) : 0;
  Download d{curl.get()};
  d.file = file;
  d.resumed_from = std::int64_t(have);
  d.progress = &progress;
  // A plain Range header, not CURLOPT_RESUME_FROM: with that, curl fails on a server that
  // ignores ranges, where this starts the file again.
  const std::string range = std::to_string(have) + "-";
  if (have > 0) curl_easy_setopt(curl.get(), CURLOPT_RANGE, range.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, write_to_file);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &d);
  curl_easy_setopt(curl.get(), CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl.get(), CURLOPT_XFERINFOFUNCTION, report);
  curl_easy_setopt(curl.get(), CURLOPT_XFERINFODATA, &d);
  const CURLcode code = curl_easy_perform(curl.get());
  const bool flushed = !d.out || std::fclose(d.out) == 0;
  if (d.stopped) return false;
  const long status = status_of(curl.get());
  // 416: asked for bytes past the end, so `file` already holds all of them.
  if (status == 416 && have > 0) return true;
  if (status >= 400) throw UserError("cannot fetch " + url + ": the server answered " + std::to_string(status));
  if (code != CURLE_OK) throw UserError(failure(url, code, error));
  if (!flushed) throw UserError("cannot write " + file.string());
  return true;
}

std::string resolve_url(const std::string& base, const std::string& relative) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> url(curl_url(), curl_url_cleanup);
  if (!url || curl_url_set(url.get(), CURLUPART_URL, base.c_str(), 0) != CURLUE_OK ||
      curl_url_set(url.get(), CURLUPART_URL, relative.c_str(), 0) != CURLUE_OK) {
    throw UserError("not a URL: " + relative + " (from " + base + ")");
  }
  char* text = nullptr;
  curl_url_get(url.get(), CURLUPART_URL, &text, 0);
  std::string resolved = text ? text : "";
  curl_free(text);
  return resolved;
}

}  // namespace normlab
