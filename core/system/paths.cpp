#include "paths.h"

#include <cstdlib>

namespace normlab {

std::filesystem::path user_cache_home() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return xdg;
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : ".") / ".cache";
}

std::filesystem::path cache_dir() {
  std::filesystem::path dir;
  if (const char* own = std::getenv("NORMLAB_CACHE_DIR"); own && *own) {
    dir = own;
  } else {
    dir = user_cache_home() / "normlab";
  }
  std::filesystem::create_directories(dir);
  return dir;
}

std::filesystem::path cuda_install_dir() { return cache_dir() / ("cuda-" NORMLAB_TORCH_VERSION); }

}  // namespace normlab
