// Developer tool: for every instruction of the given HLO files, compares the
// declared shape with InferShape and prints each disagreement. Exit code 1 if
// any. Usage: shapecheck [--opcodes=a,b] FILE...
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "xlite/text/parser.h"
#include "xlite/verify/shape_inference.h"

int main(int argc, char** argv) {
  std::set<std::string> only;
  int bad = 0, checked = 0;
  std::map<std::string, int> unimplemented;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (absl::StartsWith(arg, "--opcodes=")) {
      for (auto s : absl::StrSplit(arg.substr(10), ',')) only.insert(std::string(s));
      continue;
    }
    std::ifstream in(arg);
    std::stringstream ss;
    ss << in.rdbuf();
    auto m = xlite::ParseHloModule(ss.str(), arg);
    if (!m.ok()) {
      std::cerr << "parse error: " << m.status().message() << "\n";
      continue;
    }
    for (const auto& c : (*m)->computations()) {
      for (const auto& instr : c->instructions()) {
        std::string op(xlite::HloOpcodeString(instr->opcode()));
        if (!only.empty() && !only.count(op)) continue;
        ++checked;
        auto s = xlite::InferShape(*instr);
        if (!s.ok()) {
          if (absl::IsUnimplemented(s.status())) {
            unimplemented[op]++;
            continue;
          }
          ++bad;
          std::cout << arg << ": " << instr->name() << ": " << s.status().message() << "\n";
        } else if (!xlite::shape_inference::Compatible(*s, instr->shape())) {
          ++bad;
          std::cout << arg << ": " << instr->name() << " (" << op << "): declared "
                    << instr->shape().ToString(false) << ", inferred " << s->ToString(false)
                    << "\n";
        }
      }
    }
  }
  for (auto& [op, n] : unimplemented) std::cout << "unimplemented: " << op << " x" << n << "\n";
  std::cout << "checked " << checked << ", disagreements " << bad << "\n";
  return bad ? 1 : 0;
}
