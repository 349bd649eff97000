#pragma once
// The window's tests share the lab's test helpers (a made-up corpus, tiny runs, waiting
// on the event loop) under the name they use.
#include "tests/lab/test_support.h"

namespace normlab::ui {
namespace test = lab::test;
}  // namespace normlab::ui
