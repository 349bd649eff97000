#pragma once
// Exponential moving average with the start-up bias removed, as TensorBoard smooths.

namespace normlab::ui {

class DebiasedEma {
 public:
  // weight 0 leaves values unchanged; near 1 smooths hard. Must be in [0, 1).
  explicit DebiasedEma(double weight = 0) : weight_(weight) {}

  // Takes the next value and returns the smoothed one. A plain EMA starts at 0 and
  // creeps up; dividing by (1 - weight^n) undoes that, so early points are not pulled down.
  double add(double value) {
    biased_ = weight_ * biased_ + (1 - weight_) * value;
    decay_ *= weight_;
    return biased_ / (1 - decay_);
  }

 private:
  double weight_;
  double biased_ = 0;
  double decay_ = 1;
};

}  // namespace normlab::ui
