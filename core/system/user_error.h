#pragma once
// The one error type a user is shown as it is: every layer raises it for input the user
// can fix, and the command line and the window print its message without a stack trace.
#include <stdexcept>

namespace normlab {

// Raised for any input a user can fix: a bad option, corpus or file.
struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace normlab
