#include "atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "config.h"

namespace normlab {
namespace fs = std::filesystem;

void write_file_atomically(const fs::path& path, const std::string& contents) {
  // Why the first step that failed did: "No space left on device", "Permission denied"...
  std::string failure;
  const auto fail = [&failure](const std::string& reason) {
    if (failure.empty()) failure = reason;
  };
  std::error_code error;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), error);  // open says why not
  fs::path temp = path;
  temp += ".tmp-" + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(std::strerror(errno));
  for (std::size_t done = 0; failure.empty() && done < contents.size();) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(n < 0 ? std::strerror(errno) : "the disk took no more bytes");
    else done += std::size_t(n);
  }
  // fsync before rename: after a crash the name points at the old file or the whole new one.
  if (failure.empty() && ::fsync(fd) != 0) fail(std::strerror(errno));
  if (fd >= 0 && ::close(fd) != 0) fail(std::strerror(errno));
  if (failure.empty()) {
    fs::rename(temp, path, error);
    if (error) fail(error.message());
  }
  if (!failure.empty()) {
    fs::remove(temp, error);
    throw UserError("cannot write " + path.string() + ": " + failure);
  }
}

}  // namespace normlab
