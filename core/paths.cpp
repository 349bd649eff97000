#include "paths.h"

#include <cstdlib>

namespace normlab {

std::filesystem::path cache_dir() {
  std::filesystem::path dir;
  if (const char* own = std::getenv("NORMLAB_CACHE_DIR"); own && *own) {
    dir = own;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    dir = std::filesystem::path(xdg) / "normlab";
  } else {
    const char* home = std::getenv("HOME");
    dir = std::filesystem::path(home && *home ? home : ".") / ".cache" / "normlab";
  }
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace normlab
