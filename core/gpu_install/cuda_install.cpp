#include "cuda_install.h"

#include <archive.h>
#include <archive_entry.h>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <unistd.h>

#include "core/system/paths.h"
#include "core/system/user_error.h"

#include "http_client.h"

namespace normlab {

namespace fs = std::filesystem;

std::string CudaInstallOptions::default_index_url() {
  const char* pip_index = std::getenv("PIP_INDEX_URL");
  return pip_index && *pip_index ? pip_index : "https://pypi.org/simple";
}

std::string sha256_of_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UserError("cannot read " + file.string());
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr);
  std::array<char, 1 << 16> buffer;
  while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0) {
    EVP_DigestUpdate(context.get(), buffer.data(), std::size_t(in.gcount()));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context.get(), digest, &length);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    char pair[3];
    std::snprintf(pair, sizeof pair, "%02x", digest[i]);
    hex += pair;
  }
  return hex;
}

const char* stage_name(CudaInstallProgress::Stage stage) {
  switch (stage) {
    case CudaInstallProgress::Stage::Download: return "Downloading";
    case CudaInstallProgress::Stage::Check: return "Checking";
    case CudaInstallProgress::Stage::Unpack: return "Unpacking";
  }
  return "";
}

namespace {

using Stage = CudaInstallProgress::Stage;

// Where the index keeps `wheel`: its project page (PEP 691 JSON) lists every file with its
// URL and hashes. An index that offers other bytes under the pinned name is refused.
std::string wheel_url(const std::string& index, const PinnedWheel& wheel) {
  const std::string page = index + (index.back() == '/' ? "" : "/") + wheel.project + "/";
  const std::string body = http_get(page, {"Accept: application/vnd.pypi.simple.v1+json"});
  const auto listing = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!listing.is_object() || !listing.contains("files") || !listing["files"].is_array()) {
    throw UserError(page + " is not a package index page (PEP 691 JSON)");
  }
  for (const auto& file : listing["files"]) {
    if (file.value("filename", "") != wheel.filename) continue;
    const std::string offered = file.value("/hashes/sha256"_json_pointer, "");
    if (!offered.empty() && offered != wheel.sha256) {
      throw UserError(page + " offers a different " + wheel.filename + " (SHA-256 " + offered +
                      ") than the pinned one (" + wheel.sha256 + ")");
    }
    return resolve_url(page, file.value("url", ""));
  }
  throw UserError(page + " does not list " + wheel.filename);
}

// The wheel's shared libraries: torch/lib/* and nvidia/<part>/lib/*, nothing else (Python
// code, headers).
bool wanted(const std::string& path) {
  if (path.find("..") != std::string::npos || path.empty() || path.front() == '/') return false;
  return path.rfind("torch/lib/", 0) == 0 || (path.rfind("nvidia/", 0) == 0 && path.find("/lib/") != std::string::npos);
}

void unpack(const fs::path& wheel, const fs::path& into) {
  std::unique_ptr<archive, decltype(&archive_read_free)> zip(archive_read_new(), archive_read_free);
  archive_read_support_format_zip(zip.get());
  if (archive_read_open_filename(zip.get(), wheel.c_str(), 1 << 16) != ARCHIVE_OK) {
    throw UserError("cannot open " + wheel.string() + ": " + archive_error_string(zip.get()));
  }
  archive_entry* entry = nullptr;
  int status;
  while ((status = archive_read_next_header(zip.get(), &entry)) == ARCHIVE_OK) {
    const std::string path = archive_entry_pathname(entry);
    if (archive_entry_filetype(entry) != AE_IFREG || !wanted(path)) continue;
    const fs::path out = into / path;
    fs::create_directories(out.parent_path());
    std::ofstream file(out, std::ios::binary | std::ios::trunc);
    const void* block;
    size_t size;
    la_int64_t offset;
    int read;
    while ((read = archive_read_data_block(zip.get(), &block, &size, &offset)) == ARCHIVE_OK) {
      file.write(static_cast<const char*>(block), std::streamsize(size));
    }
    if (read != ARCHIVE_EOF)
      throw UserError("cannot unpack " + wheel.string() + ": " + archive_error_string(zip.get()));
    if (!file.flush()) throw UserError("cannot write " + out.string() + " (disk full?)");
  }
  if (status != ARCHIVE_EOF)
    throw UserError("cannot unpack " + wheel.string() + ": " + archive_error_string(zip.get()));
}

}  // namespace

bool install_cuda_libraries(const CudaInstallOptions& options, const CudaInstallCallback& progress) {
  if (options.index_url.rfind("http://", 0) != 0 && options.index_url.rfind("https://", 0) != 0) {
    throw UserError("the package index " + options.index_url + " is not an http:// or https:// address");
  }
  const fs::path downloads = options.downloads.empty() ? options.target.parent_path() / "downloads" : options.downloads;
  fs::create_directories(downloads);
  CudaInstallProgress report;
  report.count = int(options.wheels.size());
  for (const auto& wheel : options.wheels) report.total += wheel.size;
  auto tell = [&](Stage stage, const PinnedWheel& wheel, std::int64_t done) {
    report.stage = stage;
    report.file = wheel.filename;
    report.done = done;
    return !progress || progress(report);
  };

  std::int64_t finished = 0;  // bytes of the wheels already checked
  for (const auto& wheel : options.wheels) {
    ++report.index;
    const fs::path checked = downloads / wheel.filename;
    if (!fs::exists(checked)) {
      const fs::path part = downloads / (wheel.filename + ".part");
      const std::string url = wheel_url(options.index_url, wheel);
      const bool complete = http_download(
          url, part, [&](std::int64_t done, std::int64_t) { return tell(Stage::Download, wheel, finished + done); });
      if (!complete) return false;
      if (!tell(Stage::Check, wheel, finished + wheel.size)) return false;
      if (const std::string sha = sha256_of_file(part); sha != wheel.sha256) {
        fs::remove(part);
        throw UserError(wheel.filename + " arrived damaged (SHA-256 " + sha + ", pinned " + wheel.sha256 +
                        "); it was deleted, so the next try downloads it again");
      }
      fs::rename(part, checked);
    }
    finished += wheel.size;
  }

  // Unpacked beside the target, then renamed over it: never a half-installed target.
  const fs::path staging = options.target.string() + ".partial-" + std::to_string(getpid());
  fs::remove_all(staging);
  report.index = 0;
  for (const auto& wheel : options.wheels) {
    ++report.index;
    if (!tell(Stage::Unpack, wheel, report.total)) {
      fs::remove_all(staging);
      return false;
    }
    unpack(downloads / wheel.filename, staging);
  }
  const fs::path old = options.target.string() + ".old-" + std::to_string(getpid());
  if (fs::exists(options.target)) fs::rename(options.target, old);
  fs::rename(staging, options.target);
  fs::remove_all(old);
  for (const auto& wheel : options.wheels) fs::remove(downloads / wheel.filename);
  return true;
}

}  // namespace normlab
