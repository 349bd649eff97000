#pragma once
#include <filesystem>

namespace normlab {

// $NORMLAB_CACHE_DIR, else $XDG_CACHE_HOME/normlab, else ~/.cache/normlab. Created on demand.
std::filesystem::path cache_dir();

}  // namespace normlab
