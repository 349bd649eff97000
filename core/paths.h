#pragma once
#include <filesystem>

namespace normlab {

// $XDG_CACHE_HOME, else ~/.cache: where the set-up script puts the pinned LibTorch.
std::filesystem::path user_cache_home();

// $NORMLAB_CACHE_DIR, else user_cache_home()/normlab. Created on demand.
std::filesystem::path cache_dir();

}  // namespace normlab
