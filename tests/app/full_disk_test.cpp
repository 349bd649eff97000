// normlab-cli training into folders that refuse its files: a tiny tmpfs that is full or
// read-only, a folder without write permission, a cap on file size (what a full disk does
// to a write half way). Each test tries every way this machine allows: mounting needs root
// with CAP_SYS_ADMIN, a read-only mode binds only non-root users, the size cap works for
// anyone. So the tests always fail real writes, as root in CI or as a user at a desk.
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/runs/run_record.h"
#include "tests/core/test_support.h"
#include "tests/support/faults_tried.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

// A 64 KiB tmpfs at `dir` for the test's lifetime, if this process may mount one.
class TinyTmpfs {
 public:
  explicit TinyTmpfs(const fs::path& dir) : dir_(dir) {
    fs::create_directories(dir);
    mounted_ = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k") == 0;
  }
  ~TinyTmpfs() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  // Takes every free byte; what was written stays readable.
  void fill() const {
    const int fd = ::open((dir_ / "filler").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const std::string block(4096, 'x');
    while (::write(fd, block.data(), block.size()) > 0) {
    }
    ::close(fd);
  }
  bool make_read_only() const {
    return ::mount(nullptr, dir_.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, "size=64k") == 0;
  }

 private:
  fs::path dir_;
  bool mounted_ = false;
};

// How a folder was made to refuse writes, and the reason normlab-cli must then name.
struct Fault {
  std::string name;
  std::string reason;
};

class FullDiskTest : public CacheTest {
 protected:
  // Exit status of `normlab-cli args`, run in the temp folder, each file it writes capped
  // at `file_size_limit` bytes (writes beyond fail with EFBIG); output in out_ and err_.
  int run(const std::string& args, rlim_t file_size_limit = RLIM_INFINITY) {
    const std::string command = "'" NORMLAB_CLI "' " + args;
    const fs::path out_file = temp_ / "stdout.txt", err_file = temp_ / "stderr.txt";
    const pid_t child = ::fork();
    if (child == 0) {  // only async-signal-safe calls until exec
      const rlimit limit{file_size_limit, file_size_limit};
      ::setrlimit(RLIMIT_FSIZE, &limit);
      ::signal(SIGXFSZ, SIG_IGN);  // inherited through exec: write() fails instead of killing
      ::dup2(::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 1);
      ::dup2(::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 2);
      if (::chdir(temp_.path().c_str()) == 0) ::execl("/bin/sh", "sh", "-c", command.c_str(), nullptr);
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    out_ = read_file(out_file);
    err_ = read_file(err_file);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // Without weights: the 64 KiB tmpfs holds a run's files, not its weights.
  static std::string tiny_run(const fs::path& out) {
    return "train --corpus corpus.txt --device cpu --threads 1 --layers 2 --d-model 32 --heads 2 "
           "--context 16 --batch 4 --vocab 256 --steps 12 --warmup 3 --eval-interval 5 "
           "--eval-batches 2 --lr 3e-3 --final-weights drop --name tiny --out '" +
           out.string() + "'";
  }

  // One line on stderr: what could not be written, and why.
  void expect_one_line_naming(const fs::path& file, const std::string& reason) {
    EXPECT_EQ(std::count(err_.begin(), err_.end(), '\n'), 1) << err_;
    EXPECT_THAT(err_, HasSubstr(file.string()));
    EXPECT_THAT(err_, HasSubstr(reason));
  }

  std::string out_, err_;
};

// A run trains into `out`, which then refuses writes; the next run says so in one line,
// exits 2, and the first run's files stay whole, with no temp file beside them.
TEST_F(FullDiskTest, OutputFolderThatRefusesWritesKeepsTheLastGoodFile) {
  corpus_file(synthetic_corpus());
  std::vector<std::string> tried;
  const auto check = [&](const Fault& fault, const fs::path& out, const std::function<void()>& refuse,
                         rlim_t file_size_limit) {
    SCOPED_TRACE(fault.name);
    ASSERT_EQ(run(tiny_run(out)), 0) << out_ << err_;
    const std::string good_json = read_file(out / "tiny.json");
    const std::string good_csv = read_file(out / "tiny.csv");
    refuse();
    EXPECT_EQ(run(tiny_run(out), file_size_limit), 2) << out_ << err_;
    expect_one_line_naming(out / "tiny.json", fault.reason);
    EXPECT_EQ(read_file(out / "tiny.json"), good_json);
    EXPECT_EQ(read_file(out / "tiny.csv"), good_csv);
    EXPECT_EQ(read_json(out / "tiny.json").steps.size(), 12u);
    for (const auto& entry : fs::directory_iterator(out)) {
      EXPECT_EQ(entry.path().string().find(".tmp-"), std::string::npos) << entry.path();
    }
    tried.push_back(fault.name);
  };

  {
    const TinyTmpfs disk(temp_ / "full");
    if (disk.mounted())
      check(
          {"full tmpfs", "No space left on device"}, temp_ / "full", [&] { disk.fill(); }, RLIM_INFINITY);
  }
  {
    const TinyTmpfs disk(temp_ / "read-only");
    if (disk.mounted()) {
      check(
          {"read-only tmpfs", "Read-only file system"}, temp_ / "read-only",
          [&] { ASSERT_TRUE(disk.make_read_only()); }, RLIM_INFINITY);
    }
  }
  const fs::path locked = temp_ / "locked";
  fs::create_directories(locked);
  fs::permissions(locked, fs::perms::owner_all);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  if (::access(locked.c_str(), W_OK) != 0) {  // root may write anyway
    fs::permissions(locked, fs::perms::owner_all);
    check(
        {"folder without write permission", "Permission denied"}, locked,
        [&] { fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec); }, RLIM_INFINITY);
    fs::permissions(locked, fs::perms::owner_all);  // so the temp folder can be removed
  } else {
    fs::permissions(locked, fs::perms::owner_all);
  }
  check(
      {"file size limit", "File too large"}, temp_ / "capped", [] {}, 512);  // below the first save

  report_faults_tried(tried);
}

// The data folder (tokenizer and token caches) refusing writes: training stops before its
// first step, non-zero, with one line naming the folder and why; no temp file is left.
TEST_F(FullDiskTest, DataFolderThatRefusesWritesIsReported) {
  corpus_file(synthetic_corpus());
  std::vector<std::string> tried;
  const auto check = [&](const std::string& name, const fs::path& cache, const std::string& reason,
                         rlim_t file_size_limit) {
    SCOPED_TRACE(name);
    ::setenv("NORMLAB_CACHE_DIR", cache.c_str(), 1);  // CacheTest restores it
    EXPECT_NE(run(tiny_run(temp_ / "runs"), file_size_limit), 0) << out_ << err_;
    expect_one_line_naming(cache, reason);
    EXPECT_THAT(out_, ::testing::Not(HasSubstr("step 1/")));
    EXPECT_FALSE(fs::exists(temp_ / "runs" / "tiny.json"));
    for (const auto& entry : fs::recursive_directory_iterator(cache)) {
      EXPECT_EQ(entry.path().string().find(".tmp-"), std::string::npos) << entry.path();
    }
    tried.push_back(name);
  };

  {
    const TinyTmpfs disk(temp_ / "full-cache");
    if (disk.mounted()) {
      disk.fill();
      check("full tmpfs", temp_ / "full-cache", "No space left on device", RLIM_INFINITY);
    }
  }
  const fs::path locked = temp_ / "locked-cache";
  fs::create_directories(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  if (::access(locked.c_str(), W_OK) != 0)
    check("folder without write permission", locked, "Permission denied", RLIM_INFINITY);
  fs::permissions(locked, fs::perms::owner_all);
  check("file size limit", temp_ / "capped-cache", "File too large", 1024);

  report_faults_tried(tried);
}

}  // namespace
}  // namespace normlab::test
