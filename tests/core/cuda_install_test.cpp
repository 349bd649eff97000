// gpu install against a package index on this machine (tests/support/index_server.py)
// with stand-in wheels of a few kilobytes: the real ones are 2.5 GB.
#include "core/gpu_install/cuda_install.h"

#include "core/gpu_install/http_client.h"
#include "tests/support/stand_in_index.h"

#include "test_support.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using test::IndexServer;
using test::read_file;
using test::StandIns;
using test::TempDir;
using test::write_file;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(CudaInstall, Sha256OfAKnownText) {
  TempDir dir;
  write_file(dir / "abc", "abc");
  EXPECT_EQ(sha256_of_file(dir / "abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(CudaInstall, UnpacksOnlyTheLibrariesOfEveryPinnedWheel) {
  TempDir dir;
  const StandIns stand_ins(dir / "index");
  IndexServer server(stand_ins.root);
  const auto options = stand_ins.options(server.url(), dir.path());
  std::vector<CudaInstallProgress> seen;
  ASSERT_TRUE(install_cuda_libraries(options, [&](const CudaInstallProgress& p) {
    seen.push_back(p);
    return true;
  }));
  EXPECT_EQ(read_file(dir / "cuda/torch/lib/libtorch_cuda.so").substr(0, 8), "backend ");
  EXPECT_EQ(read_file(dir / "cuda/nvidia/cu13/lib/libcublas.so.13"), "blas");
  EXPECT_FALSE(fs::exists(dir / "cuda/torch/__init__.py")) << "Python code is not ours to install";
  EXPECT_FALSE(fs::exists(dir / "cuda/nvidia/cu13/include")) << "nor headers";
  EXPECT_TRUE(fs::is_empty(dir / "downloads")) << "the checked wheels are deleted once unpacked";
  ASSERT_FALSE(seen.empty());
  std::int64_t total = 0;
  for (const auto& wheel : stand_ins.wheels) total += wheel.size;
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i].done, seen[i - 1].done);
  EXPECT_EQ(seen.back().total, total);
  EXPECT_EQ(seen.back().stage, CudaInstallProgress::Stage::Unpack);
  EXPECT_EQ(seen.back().count, 2);
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    EXPECT_THAT(entry.path().filename().string(), Not(HasSubstr(".partial"))) << "no staging folder left";
  }
}

TEST(CudaInstall, ReplacesAnEarlierInstallWhole) {
  TempDir dir;
  const StandIns stand_ins(dir / "index");
  IndexServer server(stand_ins.root);
  write_file((fs::create_directories(dir / "cuda/torch/lib"), dir / "cuda/torch/lib/stale.so"), "old");
  ASSERT_TRUE(install_cuda_libraries(stand_ins.options(server.url(), dir.path()), {}));
  EXPECT_FALSE(fs::exists(dir / "cuda/torch/lib/stale.so"));
  EXPECT_TRUE(fs::exists(dir / "cuda/torch/lib/libtorch_cuda.so"));
}

TEST(CudaInstall, RefusesADamagedDownloadAndDeletesIt) {
  TempDir dir;
  StandIns stand_ins(dir / "index");
  IndexServer server(stand_ins.root);
  // The file on the index changed after pinning (as a damaged transfer looks): same name, other bytes.
  stand_ins.wheels[1].sha256 = std::string(64, '0');
  auto options = stand_ins.options(server.url(), dir.path());
  // The index's own listing still matches the pin, so only the bytes can tell.
  write_file(stand_ins.root / (stand_ins.wheels[1].filename + ".sha256"), stand_ins.wheels[1].sha256);
  const std::string message = test::user_error([&] { install_cuda_libraries(options, {}); });
  EXPECT_THAT(message, HasSubstr(stand_ins.wheels[1].filename + " arrived damaged"));
  EXPECT_THAT(message, HasSubstr("deleted"));
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line";
  EXPECT_FALSE(fs::exists(options.downloads / (stand_ins.wheels[1].filename + ".part")));
  EXPECT_FALSE(fs::exists(options.target)) << "nothing installed from a failed download";
  EXPECT_TRUE(fs::exists(options.downloads / stand_ins.wheels[0].filename)) << "the good wheel stays for next time";
}

TEST(CudaInstall, RefusesAnIndexThatListsOtherBytesUnderThePinnedName) {
  TempDir dir;
  const StandIns stand_ins(dir / "index");
  IndexServer server(stand_ins.root);
  write_file(stand_ins.root / (stand_ins.wheels[0].filename + ".sha256"), std::string(64, 'f'));
  const std::string message =
      test::user_error([&] { install_cuda_libraries(stand_ins.options(server.url(), dir.path()), {}); });
  EXPECT_THAT(message, HasSubstr("offers a different " + stand_ins.wheels[0].filename));
}

TEST(CudaInstall, ResumesAnInterruptedDownloadWhereItStopped) {
  TempDir dir;
  const StandIns stand_ins(dir / "index");
  const auto options = stand_ins.options("", dir.path());
  const fs::path part = options.downloads / (stand_ins.wheels[0].filename + ".part");
  {
    IndexServer dropping(stand_ins.root, {"--cut-after", "1000"});
    auto first = options;
    first.index_url = dropping.url();
    const std::string message = test::user_error([&] { install_cuda_libraries(first, {}); });
    EXPECT_THAT(message, HasSubstr("cannot fetch"));
    EXPECT_EQ(message.find('\n'), std::string::npos) << "one line";
  }
  ASSERT_TRUE(fs::exists(part));
  EXPECT_EQ(fs::file_size(part), 1000u) << "what arrived is kept";
  IndexServer server(stand_ins.root, {"--log", (dir / "requests.log").string()});
  auto second = options;
  second.index_url = server.url();
  ASSERT_TRUE(install_cuda_libraries(second, {}));
  EXPECT_THAT(read_file(dir / "requests.log"), HasSubstr(stand_ins.wheels[0].filename + " bytes=1000-"));
  EXPECT_EQ(read_file(dir / "cuda/torch/lib/libtorch_cuda.so").size(), std::string("backend ").size() + 40000);
}

TEST(CudaInstall, AStopKeepsWhatArrivedForNextTime) {
  TempDir dir;
  const StandIns stand_ins(dir / "index");
  IndexServer server(stand_ins.root);
  const auto options = stand_ins.options(server.url(), dir.path());
  EXPECT_FALSE(install_cuda_libraries(
      options, [](const CudaInstallProgress& p) { return p.stage != CudaInstallProgress::Stage::Unpack; }));
  EXPECT_FALSE(fs::exists(options.target));
  EXPECT_TRUE(fs::exists(options.downloads / stand_ins.wheels[0].filename));
  ASSERT_TRUE(install_cuda_libraries(options, {})) << "the next try only unpacks";
  EXPECT_TRUE(fs::exists(options.target / "torch/lib/libtorch_cuda.so"));
}

TEST(CudaInstall, OfflineSaysWhatCouldNotBeReachedInOneLine) {
  TempDir dir;
  const StandIns stand_ins(dir / "index");
  // A port nothing listens on: what an unplugged machine sees, without needing one.
  const std::string message =
      test::user_error([&] { install_cuda_libraries(stand_ins.options("http://127.0.0.1:9/simple", dir.path()), {}); });
  EXPECT_THAT(message, HasSubstr("cannot fetch http://127.0.0.1:9/simple/torch/"));
  EXPECT_THAT(message, HasSubstr("onnect"));  // curl's "Couldn't connect" / "Failed to connect"
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(CudaInstall, AnIndexThatIsNoWebAddressIsRefusedFirst) {
  TempDir dir;
  const StandIns stand_ins(dir / "index");
  const std::string message =
      test::user_error([&] { install_cuda_libraries(stand_ins.options("pypi.org/simple", dir.path()), {}); });
  EXPECT_EQ(message, "the package index pypi.org/simple is not an http:// or https:// address");
  EXPECT_FALSE(fs::exists(dir / "downloads"));
}

TEST(CudaInstall, AProjectTheIndexLacksIsNamed) {
  TempDir dir;
  StandIns stand_ins(dir / "index");
  IndexServer server(stand_ins.root);
  stand_ins.wheels[0].project = "torchx";
  const std::string message =
      test::user_error([&] { install_cuda_libraries(stand_ins.options(server.url(), dir.path()), {}); });
  EXPECT_THAT(message, HasSubstr("/simple/torchx/: the server answered 404"));
}

TEST(CudaInstall, ThePinsAreTheBuildsLibTorch) {
  bool torch_pinned = false;
  for (const auto& wheel : cuda_wheels()) {
    EXPECT_EQ(wheel.sha256.size(), 64u) << wheel.filename;
    EXPECT_GT(wheel.size, 0) << wheel.filename;
    if (wheel.project == "torch") {
      torch_pinned = true;
      EXPECT_THAT(wheel.filename, HasSubstr("torch-" NORMLAB_TORCH_VERSION "-"));
    }
  }
  EXPECT_TRUE(torch_pinned);
}

TEST(HttpClient, ResolvesRelativeUrlsAsABrowserDoes) {
  EXPECT_EQ(resolve_url("https://pypi.org/simple/torch/", "../../files/torch/x.whl"),
            "https://pypi.org/files/torch/x.whl");
  EXPECT_EQ(resolve_url("https://pypi.org/simple/torch/", "https://files.pythonhosted.org/p/x.whl"),
            "https://files.pythonhosted.org/p/x.whl");
  EXPECT_EQ(resolve_url("http://127.0.0.1:8/simple/a/", "/files/a/b.whl"), "http://127.0.0.1:8/files/a/b.whl");
}

}  // namespace
}  // namespace normlab
