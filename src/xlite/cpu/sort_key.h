// Recognizes the sort comparators that order by one operand's value -- what
// JAX emits for jnp.sort, argsort and lax.sort with one key: a compare LT or
// GT of that operand's two parameters, either plain or after JAX's float
// canonicalization (select(x != x, nan, select(x == 0, 0, x))) -- so the CPU
// backend can sort them with hostlib::SortByKey's radix sort instead of
// calling the comparator (the interpreter's result either way: a stable sort
// by a strict weak order has one answer).
#ifndef XLITE_CPU_SORT_KEY_H_
#define XLITE_CPU_SORT_KEY_H_

#include <optional>

#include "xlite/hostlib/sort.h"
#include "xlite/ir/instruction.h"

namespace xlite::cpu {

// The key `sort`'s comparator orders by, or nullopt when it is another
// comparator (several keys, other arithmetic, a key type SortByKey lacks).
std::optional<hostlib::SortKey> SortKeyOf(const HloInstruction& sort);

}  // namespace xlite::cpu

#endif  // XLITE_CPU_SORT_KEY_H_
