#pragma once
// HTTP(S) over libcurl, for the two things NormLab fetches: a package index page and the
// files it names. Failures throw UserError with one line that says what could not be
// reached and why ("Could not resolve host: pypi.org").
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace normlab {

// The body of `url`, sent with these request headers ("Accept: ..."); a status of 400 or
// more throws.
std::string http_get(const std::string& url, const std::vector<std::string>& headers = {});

// Bytes written to `file` so far (resumed bytes included) and the whole file's size
// (0 while unknown). Return false to stop the download.
using DownloadProgress = std::function<bool(std::int64_t done, std::int64_t total)>;

// Downloads `url` into `file`, resuming after the bytes `file` already holds (an HTTP
// range request); a server that answers with the whole file instead starts it again.
// A stop, a dropped connection or an error leaves what arrived in `file` for next time.
// Returns false when `progress` stopped it.
bool http_download(const std::string& url, const std::filesystem::path& file, const DownloadProgress& progress);

// `relative` ("../../files/x.whl", "/files/x.whl", "https://...") as seen from `base`.
std::string resolve_url(const std::string& base, const std::string& relative);

}  // namespace normlab
