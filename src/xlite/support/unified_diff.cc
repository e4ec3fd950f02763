#include "xlite/support/unified_diff.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace xlite {
namespace {

using Lines = std::vector<absl::string_view>;

// An edit script: each entry keeps (a line of `from`), deletes it, or
// inserts a line of `to`.
struct Edit {
  enum Kind { kKeep, kDelete, kInsert } kind;
  size_t from_line;  // kKeep, kDelete
  size_t to_line;    // kKeep, kInsert
};

class Differ {
 public:
  Differ(const Lines& a, const Lines& b) : a_(a), b_(b) {}

  std::vector<Edit> Run() {
    Diff(0, a_.size(), 0, b_.size(), 0);
    return std::move(edits_);
  }

 private:
  void Diff(size_t a_lo, size_t a_hi, size_t b_lo, size_t b_hi, int depth) {
    // Common prefix and suffix.
    while (a_lo < a_hi && b_lo < b_hi && a_[a_lo] == b_[b_lo]) Keep(a_lo++, b_lo++);
    size_t suffix = 0;
    while (a_lo < a_hi - suffix && b_lo < b_hi - suffix &&
           a_[a_hi - 1 - suffix] == b_[b_hi - 1 - suffix]) {
      ++suffix;
    }
    a_hi -= suffix;
    b_hi -= suffix;
    if (a_lo == a_hi || b_lo == b_hi) {
      Replace(a_lo, a_hi, b_lo, b_hi);
    } else {
      // Deep recursion only on pathological input: match the rest by LCS.
      std::vector<std::pair<size_t, size_t>> anchors;
      if (depth < 64) anchors = Anchors(a_lo, a_hi, b_lo, b_hi);
      if (anchors.empty()) {
        Lcs(a_lo, a_hi, b_lo, b_hi);
      } else {
        for (const auto& [ai, bi] : anchors) {
          Diff(a_lo, ai, b_lo, bi, depth + 1);
          Keep(ai, bi);
          a_lo = ai + 1;
          b_lo = bi + 1;
        }
        Diff(a_lo, a_hi, b_lo, b_hi, depth + 1);
      }
    }
    for (size_t i = 0; i < suffix; ++i) Keep(a_hi + i, b_hi + i);
  }

  // Lines unique in both ranges, the longest run increasing in both
  // (patience sorting).
  std::vector<std::pair<size_t, size_t>> Anchors(size_t a_lo, size_t a_hi, size_t b_lo,
                                                 size_t b_hi) {
    struct Count {
      int a = 0, b = 0;
      size_t a_index = 0, b_index = 0;
    };
    absl::flat_hash_map<absl::string_view, Count> counts;
    for (size_t i = a_lo; i < a_hi; ++i) {
      Count& c = counts[a_[i]];
      ++c.a;
      c.a_index = i;
    }
    for (size_t i = b_lo; i < b_hi; ++i) {
      auto it = counts.find(b_[i]);
      if (it == counts.end()) continue;
      ++it->second.b;
      it->second.b_index = i;
    }
    std::vector<std::pair<size_t, size_t>> pairs;  // in `from` order
    for (size_t i = a_lo; i < a_hi; ++i) {
      const Count& c = counts[a_[i]];
      if (c.a == 1 && c.b == 1) pairs.push_back({i, c.b_index});
    }
    // Longest increasing subsequence of b indices.
    std::vector<size_t> tails;  // index into pairs
    std::vector<size_t> previous(pairs.size(), SIZE_MAX);
    for (size_t k = 0; k < pairs.size(); ++k) {
      auto it = std::lower_bound(tails.begin(), tails.end(), pairs[k].second,
                                 [&](size_t t, size_t b) { return pairs[t].second < b; });
      if (it != tails.begin()) previous[k] = *(it - 1);
      if (it == tails.end()) {
        tails.push_back(k);
      } else {
        *it = k;
      }
    }
    std::vector<std::pair<size_t, size_t>> run;
    for (size_t k = tails.empty() ? SIZE_MAX : tails.back(); k != SIZE_MAX; k = previous[k]) {
      run.push_back(pairs[k]);
    }
    std::reverse(run.begin(), run.end());
    return run;
  }

  // Classic LCS table for small ranges without anchors; larger ones are
  // shown as replaced.
  void Lcs(size_t a_lo, size_t a_hi, size_t b_lo, size_t b_hi) {
    const size_t n = a_hi - a_lo, m = b_hi - b_lo;
    if (n * m > 1000000) return Replace(a_lo, a_hi, b_lo, b_hi);
    std::vector<int> table((n + 1) * (m + 1), 0);  // LCS length of suffixes
    auto at = [&](size_t i, size_t j) -> int& { return table[i * (m + 1) + j]; };
    for (size_t i = n; i-- > 0;) {
      for (size_t j = m; j-- > 0;) {
        at(i, j) = a_[a_lo + i] == b_[b_lo + j] ? at(i + 1, j + 1) + 1
                                                : std::max(at(i + 1, j), at(i, j + 1));
      }
    }
    size_t i = 0, j = 0;
    while (i < n && j < m) {
      if (a_[a_lo + i] == b_[b_lo + j]) {
        Keep(a_lo + i++, b_lo + j++);
      } else if (at(i + 1, j) >= at(i, j + 1)) {
        edits_.push_back({Edit::kDelete, a_lo + i++, 0});
      } else {
        edits_.push_back({Edit::kInsert, 0, b_lo + j++});
      }
    }
    Replace(a_lo + i, a_hi, b_lo + j, b_hi);
  }

  void Keep(size_t ai, size_t bi) { edits_.push_back({Edit::kKeep, ai, bi}); }
  void Replace(size_t a_lo, size_t a_hi, size_t b_lo, size_t b_hi) {
    for (size_t i = a_lo; i < a_hi; ++i) edits_.push_back({Edit::kDelete, i, 0});
    for (size_t j = b_lo; j < b_hi; ++j) edits_.push_back({Edit::kInsert, 0, j});
  }

  const Lines& a_;
  const Lines& b_;
  std::vector<Edit> edits_;
};

Lines SplitLines(absl::string_view text) {
  Lines lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();  // final newline
  return lines;
}

// "l,n" as diff -u writes a range (an empty range names the line before it).
std::string Range(size_t start, size_t count) {
  if (count == 0) return absl::StrCat(start, ",0");
  if (count == 1) return absl::StrCat(start + 1);
  return absl::StrCat(start + 1, ",", count);
}

}  // namespace

std::string UnifiedDiff(absl::string_view from, absl::string_view to, absl::string_view from_name,
                        absl::string_view to_name, int context) {
  if (from == to) return "";
  const Lines a = SplitLines(from), b = SplitLines(to);
  const std::vector<Edit> edits = Differ(a, b).Run();
  std::string out = absl::StrCat("--- ", from_name, "\n+++ ", to_name, "\n");
  const size_t ctx = static_cast<size_t>(std::max(context, 0));
  size_t k = 0;
  size_t counted = 0, a_start = 0, b_start = 0;  // lines before edits[counted]
  while (k < edits.size()) {
    // Next change, then the hunk around it: it grows while the following
    // change is within 2 * context kept lines.
    while (k < edits.size() && edits[k].kind == Edit::kKeep) ++k;
    if (k == edits.size()) break;
    size_t begin = k >= ctx ? k - ctx : 0;
    while (begin < k && edits[begin].kind != Edit::kKeep) ++begin;
    size_t end = k;
    for (size_t kept = 0; end < edits.size(); ++end) {
      if (edits[end].kind == Edit::kKeep) {
        if (++kept > 2 * ctx) break;
      } else {
        kept = 0;
      }
    }
    // Trailing context: at most ctx kept lines after the last change.
    size_t last_change = end;
    while (last_change > begin && edits[last_change - 1].kind == Edit::kKeep) --last_change;
    end = std::min(end, last_change + ctx);
    // Line numbers where the hunk starts in each file.
    for (; counted < begin; ++counted) {
      if (edits[counted].kind != Edit::kInsert) ++a_start;
      if (edits[counted].kind != Edit::kDelete) ++b_start;
    }
    size_t a_count = 0, b_count = 0;
    std::string body;
    for (size_t e = begin; e < end; ++e) {
      switch (edits[e].kind) {
        case Edit::kKeep:
          absl::StrAppend(&body, " ", a[edits[e].from_line], "\n");
          ++a_count;
          ++b_count;
          break;
        case Edit::kDelete:
          absl::StrAppend(&body, "-", a[edits[e].from_line], "\n");
          ++a_count;
          break;
        case Edit::kInsert:
          absl::StrAppend(&body, "+", b[edits[e].to_line], "\n");
          ++b_count;
          break;
      }
    }
    absl::StrAppend(&out, "@@ -", Range(a_start, a_count), " +", Range(b_start, b_count), " @@\n",
                    body);
    k = end;
  }
  return out;
}

}  // namespace xlite
