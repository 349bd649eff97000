#include "text_samples.h"

#include <ATen/CPUGeneratorImpl.h>
#include <algorithm>
#include <map>
#include <stdexcept>

#include "schedule.h"

namespace normlab {

namespace {

std::int64_t prompt_length(int context) { return std::min<std::int64_t>(kPromptTokens, std::max(1, context / 2)); }

// The held-out windows that begin `skip` tokens after each prompt's start, `length` tokens
// long or as many as the split has left.
std::vector<std::vector<int>> windows(const torch::Tensor& heldout_ids, int context, std::int64_t skip,
                                      std::int64_t length) {
  const auto ids = heldout_ids.to(torch::kCPU, torch::kInt64).contiguous();
  const std::int64_t room = ids.numel() - prompt_length(context);
  std::vector<std::vector<int>> cut;
  if (room < 0) return cut;
  for (int i = 1; i <= kPromptCount; ++i) {
    const std::int64_t first = room * i / (kPromptCount + 1) + skip;
    const std::int64_t last = std::min(first + length, ids.numel());
    cut.emplace_back(ids.data_ptr<std::int64_t>() + first, ids.data_ptr<std::int64_t>() + std::max(first, last));
  }
  return cut;
}

}  // namespace

std::vector<std::vector<int>> fixed_prompts(const torch::Tensor& heldout_ids, int context) {
  return windows(heldout_ids, context, 0, prompt_length(context));
}

std::vector<std::vector<int>> fixed_references(const torch::Tensor& heldout_ids, int context) {
  const std::int64_t prompt = prompt_length(context);
  return windows(heldout_ids, context, prompt, std::min<std::int64_t>(kContinuationTokens, context - prompt));
}

torch::Tensor prompts_with_references(const std::vector<std::vector<int>>& prompts,
                                      const std::vector<std::vector<int>>& references) {
  const std::size_t length = references.empty() ? 0 : references.front().size();
  if (length == 0 || prompts.size() != references.size() ||
      std::any_of(references.begin(), references.end(), [&](const auto& r) { return r.size() != length; })) {
    return {};
  }
  std::vector<std::int64_t> rows;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    rows.insert(rows.end(), prompts[i].begin(), prompts[i].end());
    rows.insert(rows.end(), references[i].begin(), references[i].end());
  }
  return torch::tensor(rows).view({std::int64_t(prompts.size()), -1});
}

bool records_text(const TrainConfig& config, int evaluation, int step) {
  return config.text_every > 0 && (evaluation % config.text_every == 0 || step == config.steps);
}

int text_recordings(const TrainConfig& config) {
  int count = records_text(config, 0, 0), evaluation = 0;
  for (int step = 1; step <= config.steps; ++step) {
    if (evaluates_at(config, step)) count += records_text(config, ++evaluation, step);
  }
  return count;
}

std::uint64_t sample_seed(std::uint64_t run_seed, int step, int prompt) {
  // splitmix64 over the three, so nearby steps and prompts get unrelated streams.
  auto mix = [](std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  };
  return mix(mix(mix(run_seed) ^ std::uint64_t(std::uint32_t(step))) ^ std::uint64_t(std::uint32_t(prompt)));
}

namespace {

// Continues prompts of one length together: rows 0..n-1 greedy, rows n..2n-1 sampled.
void continue_group(const Decoder& decoder, const std::vector<std::vector<int>>& prompts,
                    const std::vector<std::size_t>& members, int tokens, double temperature,
                    const std::vector<std::uint64_t>& seeds, torch::Device device, std::vector<Continuation>& out) {
  const std::size_t n = members.size();
  std::vector<std::vector<std::int64_t>> rows(2 * n);
  std::vector<at::Generator> generators;
  for (std::size_t r = 0; r < n; ++r) {
    const auto& prompt = prompts[members[r]];
    rows[r] = rows[n + r] = std::vector<std::int64_t>(prompt.begin(), prompt.end());
    generators.push_back(at::make_generator<at::CPUGeneratorImpl>(seeds[members[r]]));
  }
  // The last `width` tokens of every row, as ids on the device.
  auto last = [&](std::size_t width) {
    auto ids = torch::empty({std::int64_t(2 * n), std::int64_t(width)}, torch::kInt64);
    for (std::size_t r = 0; r < 2 * n; ++r) {
      std::copy(rows[r].end() - std::ptrdiff_t(width), rows[r].end(), ids[std::int64_t(r)].data_ptr<std::int64_t>());
    }
    return ids.to(device);
  };
  const auto context = std::size_t(decoder.context);
  for (int t = 0; t < tokens; ++t) {
    const std::size_t length = rows[0].size();
    const auto next_logits =
        t == 0 || length > context ? decoder.start(last(std::min(length, context))) : decoder.next(last(1));
    const auto logits = next_logits.to(torch::kCPU, torch::kFloat64);
    if (!torch::isfinite(logits).all().item<bool>()) break;  // a diverged model: its text ends here
    const auto greedy = logits.narrow(0, 0, std::int64_t(n)).argmax(-1);
    const auto probs = torch::softmax(logits.narrow(0, std::int64_t(n), std::int64_t(n)) / temperature, -1);
    for (std::size_t r = 0; r < n; ++r) {
      rows[r].push_back(greedy[std::int64_t(r)].item<std::int64_t>());
      rows[n + r].push_back(torch::multinomial(probs[std::int64_t(r)], 1, false, generators[r]).item<std::int64_t>());
    }
  }
  for (std::size_t r = 0; r < n; ++r) {
    const auto from = std::ptrdiff_t(prompts[members[r]].size());
    out[members[r]].greedy.assign(rows[r].begin() + from, rows[r].end());
    out[members[r]].sampled.assign(rows[n + r].begin() + from, rows[n + r].end());
  }
}

// The prompts' indices by their length: prompts of one length are continued together.
std::map<std::size_t, std::vector<std::size_t>> prompts_by_length(const std::vector<std::vector<int>>& prompts,
                                                                  const std::vector<std::uint64_t>& seeds) {
  if (seeds.size() != prompts.size()) throw std::invalid_argument("one seed per prompt");
  std::map<std::size_t, std::vector<std::size_t>> by_length;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    if (prompts[i].empty()) throw std::invalid_argument("an empty prompt");
    by_length[prompts[i].size()].push_back(i);
  }
  return by_length;
}

}  // namespace

std::vector<Continuation> continue_prompts(const Decoder& decoder, const std::vector<std::vector<int>>& prompts,
                                           int tokens, double temperature, const std::vector<std::uint64_t>& seeds,
                                           torch::Device device) {
  if (device.is_cuda()) return continue_prompts_on_device(decoder, prompts, tokens, temperature, seeds, device);
  const auto by_length = prompts_by_length(prompts, seeds);
  std::vector<Continuation> out(prompts.size());
  for (const auto& [length, members] : by_length) {
    continue_group(decoder, prompts, members, tokens, temperature, seeds, device, out);
  }
  return out;
}

namespace {

// x·c modulo 2^32, for x and c below 2^32, in int64 arithmetic that cannot overflow:
// c's halves multiplied apart (each product below 2^48), the high one's low 16 bits kept.
torch::Tensor times_mod32(const torch::Tensor& x, std::int64_t c) {
  return (x * (c & 0xffff) + (x * (c >> 16)).bitwise_and(0xffff).__lshift__(16)).bitwise_and(0xffffffffLL);
}

// lowbias32 (C. Wellons' integer hash), on int64 tensors of values below 2^32 and on the host.
torch::Tensor mix32(torch::Tensor x) {
  x = x.bitwise_xor(x.__rshift__(16));
  x = times_mod32(x, 0x7feb352d);
  x = x.bitwise_xor(x.__rshift__(15));
  x = times_mod32(x, 0x846ca68b);
  return x.bitwise_xor(x.__rshift__(16));
}

std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  return x ^ (x >> 16);
}

std::int64_t seed_key(std::uint64_t seed) {
  return mix32(std::uint32_t(seed) ^ mix32(std::uint32_t(seed >> 32) ^ 0x9e3779b9U));
}

// Each prompt's tokens chosen on the device, as continue_group chooses them on the host:
// `tokens` (2n, tokens), greedy rows then sampled ones, and `kept`, how many of them came
// before the first non-finite logits, as a device scalar.
struct DeviceTokens {
  torch::Tensor tokens, kept;
};

DeviceTokens continue_group_on_device(const Decoder& decoder, const std::vector<std::vector<int>>& prompts,
                                      const std::vector<std::size_t>& members, int tokens, double temperature,
                                      const std::vector<std::uint64_t>& seeds, torch::Device device) {
  const auto n = std::int64_t(members.size());
  const auto prompt = std::int64_t(prompts[members.front()].size());
  // Every row, prompt and continuation, in one buffer on the device: a chosen token is
  // written into its column there.
  std::vector<std::int64_t> host(std::size_t(2 * n * (prompt + tokens)), 0);
  std::vector<std::int64_t> keys;
  for (std::int64_t r = 0; r < n; ++r) {
    const auto& p = prompts[members[std::size_t(r)]];
    for (const std::int64_t row : {r, n + r}) {
      std::copy(p.begin(), p.end(), host.begin() + row * (prompt + tokens));
    }
    keys.push_back(seed_key(seeds[members[std::size_t(r)]]));
  }
  const auto rows = torch::tensor(host).view({2 * n, prompt + tokens}).to(device);
  const auto row_keys = torch::tensor(keys).to(device);
  torch::Tensor token_keys;  // one per vocabulary entry, once the logits say how many
  std::vector<torch::Tensor> finite;
  const auto context = std::int64_t(decoder.context);
  for (std::int64_t t = 0; t < tokens; ++t) {
    const std::int64_t length = prompt + t;
    const bool start = t == 0 || length > context;
    const std::int64_t width = start ? std::min(length, context) : 1;
    const auto ids = rows.narrow(1, length - width, width).contiguous();
    const auto logits = (start ? decoder.start(ids) : decoder.next(ids)).to(torch::kFloat64);
    if (!token_keys.defined()) {
      token_keys = mix32(torch::arange(logits.size(-1), rows.options()).bitwise_xor(std::int64_t(0x632be5ab)));
    }
    // A diverged model's text ends at its first non-finite logits, for the whole group.
    finite.push_back(torch::isfinite(logits).all());
    rows.narrow(0, 0, n).select(1, length).copy_(logits.narrow(0, 0, n).argmax(-1));
    // Gumbel-max: the argmax of logits/T plus Gumbel noise is a draw from softmax(logits/T).
    const auto position = std::int64_t(mix32(std::uint32_t(length) ^ 0x85ebca6bU));
    const auto uniform =
        (mix32(mix32(row_keys.bitwise_xor(position)).unsqueeze(1).bitwise_xor(token_keys)).to(torch::kFloat64) + 0.5) /
        4294967296.0;
    const auto noise = -torch::log(-torch::log(uniform));
    rows.narrow(0, n, n).select(1, length).copy_((logits.narrow(0, n, n) / temperature + noise).argmax(-1));
  }
  const auto kept =
      finite.empty() ? torch::zeros({}, rows.options()) : torch::stack(finite).to(torch::kInt64).cumprod(0).sum();
  return {rows.narrow(1, prompt, tokens), kept};
}

}  // namespace

std::vector<Continuation> continue_prompts_on_device(const Decoder& decoder,
                                                     const std::vector<std::vector<int>>& prompts, int tokens,
                                                     double temperature, const std::vector<std::uint64_t>& seeds,
                                                     torch::Device device, int* host_reads) {
  const auto by_length = prompts_by_length(prompts, seeds);
  std::vector<const std::vector<std::size_t>*> groups;
  std::vector<torch::Tensor> flat;  // every group's tokens, then every group's kept count
  std::vector<torch::Tensor> kept;
  for (const auto& [length, members] : by_length) {
    const DeviceTokens chosen = continue_group_on_device(decoder, prompts, members, tokens, temperature, seeds, device);
    groups.push_back(&members);
    flat.push_back(chosen.tokens.reshape({-1}));
    kept.push_back(chosen.kept.reshape({1}));
  }
  std::vector<Continuation> out(prompts.size());
  if (groups.empty()) return out;
  flat.insert(flat.end(), kept.begin(), kept.end());
  // The one read from the device.
  const auto host = torch::cat(flat).to(torch::kCPU).contiguous();
  if (host_reads) ++*host_reads;
  const std::int64_t* values = host.data_ptr<std::int64_t>();
  const std::int64_t* counts = values + host.numel() - std::int64_t(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& members = *groups[g];
    const std::size_t n = members.size();
    const auto count = std::ptrdiff_t(counts[g]);
    for (std::size_t r = 0; r < n; ++r) {
      const std::int64_t* greedy = values + r * std::size_t(tokens);
      const std::int64_t* sampled = values + (n + r) * std::size_t(tokens);
      out[members[r]].greedy.assign(greedy, greedy + count);
      out[members[r]].sampled.assign(sampled, sampled + count);
    }
    values += 2 * n * std::size_t(tokens);
  }
  return out;
}

}  // namespace normlab
