#include "atomic_file.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <signal.h>
#include <sstream>
#include <streambuf>
#include <unistd.h>

#include "user_error.h"

namespace normlab {
namespace fs = std::filesystem;

namespace {

// Buffers what is streamed into it and writes it to `fd`; remembers why the first write
// that failed did ("No space left on device"...) and then takes no more.
class FileBuffer : public std::streambuf {
 public:
  explicit FileBuffer(int fd) : fd_(fd) { setp(buffer_, buffer_ + sizeof buffer_); }
  const std::string& failure() const { return failure_; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    for (const char* p = pbase(); failure_.empty() && p < pptr();) {
      const ssize_t n = ::write(fd_, p, std::size_t(pptr() - p));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) failure_ = n < 0 ? std::strerror(errno) : "the disk took no more bytes";
      else p += n;
    }
    setp(buffer_, buffer_ + sizeof buffer_);
    return failure_.empty();
  }

  int fd_;
  std::string failure_;
  char buffer_[64 * 1024];
};

bool is_live_process(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// Removes `path.tmp-<pid>[-<n>]` files that a process killed mid-write left (the rename
// never came), where that process is gone; a live one's temp file may be its write in progress.
void remove_stale_temps(const fs::path& path) {
  const std::string prefix = path.filename().string() + ".tmp-";
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string suffix = name.substr(prefix.size());
    const std::string digits = suffix.substr(0, suffix.find('-'));
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = pid_t(std::stol(digits));
    if (pid <= 0 || pid == ::getpid() || is_live_process(pid)) continue;
    std::error_code ignored;
    fs::remove(it->path(), ignored);
  }
}

}  // namespace

void write_file_atomically(const fs::path& path, const std::function<void(std::ostream&)>& write) {
  // Why the first step that failed did: "No space left on device", "Permission denied"...
  std::string failure;
  const auto fail = [&failure](const std::string& reason) {
    if (failure.empty()) failure = reason;
  };
  std::error_code error;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), error);  // open says why not
  remove_stale_temps(path);  // first: on a full disk their space may be what this write needs
  // Its own temp file per write: threads of one process (runs side by side filling the
  // same cache) may write one path at once, and the last rename wins whole.
  static std::atomic<unsigned> writes{0};
  fs::path temp = path;
  temp += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(++writes);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(std::strerror(errno));
  if (failure.empty()) {
    FileBuffer buffer(fd);
    std::ostream out(&buffer);
    try {
      write(out);
      out.flush();
    } catch (...) {
      ::close(fd);
      fs::remove(temp, error);
      throw;
    }
    if (!buffer.failure().empty()) fail(buffer.failure());
    else if (!out) fail("the contents could not be written");
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

void write_file_atomically(const fs::path& path, const std::string& contents) {
  write_file_atomically(
      path, [&contents](std::ostream& out) { out.write(contents.data(), std::streamsize(contents.size())); });
}

std::string read_whole_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path.string() + ": cannot be read: " + std::strerror(errno));
  std::ostringstream contents;
  contents << in.rdbuf();  // an empty file inserts nothing and fails `contents`: not an error
  if (in.bad()) throw UserError(path.string() + ": cannot be read: " + std::strerror(errno));
  return contents.str();
}

}  // namespace normlab
