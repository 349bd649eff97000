#include "atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include "config.h"

namespace normlab {
namespace fs = std::filesystem;

void write_file_atomically(const fs::path& path, const std::string& contents) {
  std::error_code error;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), error);
  fs::path temp = path;
  temp += ".tmp-" + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool written = fd >= 0;
  for (std::size_t done = 0; written && done < contents.size();) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    written = n > 0;
    done += written ? std::size_t(n) : 0;
  }
  // fsync before rename: after a crash the name points at the old file or the whole new one.
  written = written && ::fsync(fd) == 0;
  if (fd >= 0) written = (::close(fd) == 0) && written;
  if (written) fs::rename(temp, path, error);
  if (!written || error) {
    fs::remove(temp, error);
    throw UserError("cannot write " + path.string() + " (is the folder writable, the disk full?)");
  }
}

}  // namespace normlab
