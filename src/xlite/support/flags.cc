#include "xlite/support/flags.h"

#include <cstdlib>
#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace xlite {
namespace {

absl::StatusOr<bool> ParseBool(absl::string_view name, absl::string_view value) {
  if (value.empty() || value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  return absl::InvalidArgumentError(
      absl::StrCat("--", name, " must be true or false, got '", value, "'"));
}

absl::Status CheckRegex(absl::string_view name, const std::string& value) {
  try {
    std::regex re(value);
  } catch (const std::regex_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, "='", value, "' is not a valid regular expression"));
  }
  return absl::OkStatus();
}

// The true|false flags, one row each.
struct BoolFlagRow {
  absl::string_view name;
  bool DebugOptions::*member;
};
constexpr BoolFlagRow kBoolFlags[] = {
    {"xla_dump_hlo_as_text", &DebugOptions::dump_hlo_as_text},
    {"xla_disable_all_hlo_passes", &DebugOptions::disable_all_hlo_passes},
    {"xlite_poison_dead_slices", &DebugOptions::poison_dead_slices},
    {"xlite_profile", &DebugOptions::profile},
    {"xlite_verify_each_pass", &DebugOptions::verify_each_pass},
    {"xlite_pass_timing", &DebugOptions::pass_timing},
    {"xlite_dump_pass_diffs", &DebugOptions::dump_pass_diffs},
    {"xlite_verify_buffer_assignment", &DebugOptions::verify_buffer_assignment},
    {"xlite_strict_donation", &DebugOptions::strict_donation},
    {"xlite_cpu_concurrent_executor", &DebugOptions::cpu_concurrent_executor},
    {"xlite_cpu_enable_command_buffer", &DebugOptions::cpu_enable_command_buffer},
    {"xlite_cpu_enable_loop_kernels", &DebugOptions::cpu_enable_loop_kernels},
    {"xla_allow_excess_precision", &DebugOptions::allow_excess_precision},
};

bool DebugOptions::*BoolFlag(absl::string_view name) {
  for (const BoolFlagRow& row : kBoolFlags) {
    if (row.name == name) return row.member;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<bool> ApplyDebugFlag(absl::string_view arg, DebugOptions& o) {
  if (!absl::StartsWith(arg, "--xla_") && !absl::StartsWith(arg, "--xlite_")) return false;
  std::pair<std::string, std::string> kv = absl::StrSplit(arg.substr(2), absl::MaxSplits('=', 1));
  const std::string& name = kv.first;
  const std::string& value = kv.second;
  auto list = [&] {
    return std::vector<std::string>(absl::StrSplit(value, ',', absl::SkipEmpty()));
  };
  if (name == "xla_dump_to") {
    o.dump_to = value;
  } else if (name == "xla_dump_hlo_pass_re") {
    if (absl::Status s = CheckRegex(name, value); !s.ok()) return s;
    o.dump_hlo_pass_re = value;
  } else if (name == "xla_dump_hlo_module_re") {
    if (absl::Status s = CheckRegex(name, value); !s.ok()) return s;
    o.dump_hlo_module_re = value;
  } else if (name == "xla_disable_hlo_passes") {
    o.disable_hlo_passes = list();
  } else if (name == "xla_enable_hlo_passes_only") {
    o.enable_hlo_passes_only = list();
  } else if (bool DebugOptions::*flag = BoolFlag(name)) {
    absl::StatusOr<bool> b = ParseBool(name, value);
    if (!b.ok()) return b.status();
    o.*flag = *b;
  } else if (name == "xlite_memory_limit") {
    int64_t bytes = 0;
    if (!absl::SimpleAtoi(value, &bytes) || bytes < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", name, " must be a number of bytes >= 0 (0: no limit), got '", value, "'"));
    }
    o.memory_limit = bytes;
  } else if (name == "xlite_cpu_threads") {
    int n = 0;
    if (!absl::SimpleAtoi(value, &n) || n < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " must be a number of threads >= 0 (0: the cores usable), got '",
                       value, "'"));
    }
    o.cpu_threads = n;
  } else if (name == "xla_force_host_platform_device_count" ||
             name == "xla_cpu_collective_call_terminate_timeout_seconds") {
    int n = 0;
    if (!absl::SimpleAtoi(value, &n) || n < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " must be a positive number, got '", value, "'"));
    }
    (name == "xla_force_host_platform_device_count" ? o.host_platform_device_count
                                                    : o.collective_timeout_seconds) = n;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
  }
  return true;
}

absl::StatusOr<DebugOptions> ReadDebugOptions(std::vector<std::string>& args) {
  DebugOptions options;
  if (const char* env = std::getenv("XLA_FLAGS")) {
    for (absl::string_view flag :
         absl::StrSplit(env, absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
      absl::StatusOr<bool> used = ApplyDebugFlag(flag, options);
      if (!used.ok())
        return absl::InvalidArgumentError(absl::StrCat("XLA_FLAGS: ", used.status().message()));
      if (!*used) {
        return absl::InvalidArgumentError(absl::StrCat("XLA_FLAGS: unknown flag '", flag, "'"));
      }
    }
  }
  std::vector<std::string> rest;
  for (const std::string& arg : args) {
    absl::StatusOr<bool> used = ApplyDebugFlag(arg, options);
    if (!used.ok()) return used.status();
    if (!*used) rest.push_back(arg);
  }
  args = std::move(rest);
  return options;
}

}  // namespace xlite
