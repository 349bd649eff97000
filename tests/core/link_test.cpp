// The torch wheel's libtorch.so exports its own static copy of std::filesystem (built
// with a newer GCC, pytorch/pytorch#133437). When it comes before libstdc++ in the
// executable's NEEDED list, our calls bind to it, and its remove_all calls a
// recursive_directory_iterator member Debian 12's libstdc++ lacks: a jump to address 0.
#include <sys/wait.h>
#include <unistd.h>

#include "test_support.h"

namespace normlab::test {
namespace {

TEST(Link, FilesystemRemoveAllWorks) {
  TempDir dir;
  fs::create_directories(dir / "a" / "b");
  write_file(dir / "a" / "b" / "c.txt", "x");
  // In a child process, so a crash fails this test instead of ending the whole run.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::error_code error;
    const auto removed = fs::remove_all(dir / "a", error);
    ::_exit(removed == 3 && !error ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "std::filesystem::remove_all crashed (signal "
                                 << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_FALSE(fs::exists(dir / "a"));
}

}  // namespace
}  // namespace normlab::test
