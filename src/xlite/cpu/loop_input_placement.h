// The thunk pass `loop-input-placement`: a kernel whose value only whole-loop
// kernels read (loop_kernels.h: a while or conditional run as one function on
// one thread) runs on one thread too. Split across the pool, its parts leave
// their share of the value in the other cores' caches, and the loop, often
// reading it an element per iteration, fetches it from there line by line:
// jax.b380442861's 4 MB iota read by a 1M-iteration loop took 0.60 ms at 2
// threads against 0.30 at 1 (0.17 for the loop alone at either). Only kernels
// touching at most 2 Mi elements (a costly one on a large pool would lose
// more than the loop gains; measured only at 2 threads), only in the
// top-level sequence, and only where every thunk touching an output before
// it is written again (or poisoned) is a whole-loop kernel: any other
// reader, or a writer that may also read, keeps the split.
//
// Runs after the JIT has bound the kernels (it lowers their partition
// bound) and before command-buffer conversion records them.
#ifndef XLITE_CPU_LOOP_INPUT_PLACEMENT_H_
#define XLITE_CPU_LOOP_INPUT_PLACEMENT_H_

#include "xlite/cpu/thunk.h"

namespace xlite::cpu {

void KeepLoopInputsOnOneThread(ThunkSequence& sequence);

}  // namespace xlite::cpu

#endif  // XLITE_CPU_LOOP_INPUT_PLACEMENT_H_
