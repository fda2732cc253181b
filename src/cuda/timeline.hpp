// Kernel timelines, a diagnostic of builds configured with -DSMLA_KERNEL_TIMELINE=ON: the
// Hopper attention kernels record, per CTA, when fixed points of its work were reached
// (%globaltimer, ns, one clock for every SM), and the combine kernel when each of its blocks
// began its work and ended; `smla bench --timeline` prints them. The records take the first
// kBytes of the Hopper path's workspace (workspace_size counts them), so nothing is allocated
// behind the caller. In every other build kBytes is 0 and mark() compiles to nothing: the kernels'
// machine code is that of a build without it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace smla::timeline {

#if defined(SMLA_KERNEL_TIMELINE)
inline constexpr bool kEnabled = true;
#else
inline constexpr bool kEnabled = false;
#endif

// The points of an attention CTA. The producer's are marked by its thread 0, the consumers'
// by consumer 0's thread 0 (kConsumer1Results by consumer 1's); "first" points keep the CTA's
// first occurrence, the others its last. A point the CTA never reaches stays 0.
enum Point : int {
  kEntry,               // kernel entered
  kProducerStart,       // producer: its first item begins (after the barrier and setmaxnreg)
  kFirstSlots,          // quantized producer: the first step's slot ids have arrived
  kFirstRows,           // quantized producer: the first step's quantized pieces have arrived
  kFirstStage,          // quantized producer: the first stage handed over (dequantized)
  kLastStage,           // quantized producer: the last stage handed over
  kProducerDone,        // producer: every item's loads issued
  kConsumerQ,           // consumer 0: the first item's Q has landed
  kConsumerFirstStage,  // consumer 0: the first item's first rows are ready
  kConsumerFirstS,      // consumer 0: the first item's first S is done
  // Consumer 0's changes from item 0 to item 1 and from item kSteadyItem to the next (items
  // counted from 0 in the CTA's walk; mark_item_change): what a change of item costs, at the
  // start and once the caches are warm.
  kFirstResultsBegin,   // item 0's steps done, its results begin
  kFirstResultsWritten, // item 0's results stored (issued, not landed)
  kSecondQ,             // item 1's Q has landed
  kSecondS,             // item 1's first S is done
  kSteadyResultsBegin,  // the same four of items kSteadyItem and kSteadyItem + 1
  kSteadyResultsWritten,
  kSteadyNextQ,
  kSteadyNextS,
  kConsumerLastStage,   // consumer 0 (attend kernel): the rows of its last step after the
                        // first are ready
  kResultsBegin,        // consumer 0: the last item's steps done, its results begin
  kConsumer1Results,    // consumer 1: the last item's steps done, its results begin
  kResultsSumsShared,   // consumer 0: the last item's row sums exchanged (both consumers')
  kResultsWritten,      // consumer 0: the last item's results stored (issued, not landed)
  kConsumerDone,        // consumer 0: done
  kPoints
};

inline constexpr const char* kPointNames[] = {
    "kernel entered",
    "producer: first item begins",
    "producer: first slot ids arrived",
    "producer: first quantized rows arrived",
    "producer: first stage handed over",
    "producer: last stage handed over",
    "producer: every load issued",
    "consumer 0: first Q landed",
    "consumer 0: first rows ready",
    "consumer 0: first S done",
    "consumer 0: item 0's results begin",
    "consumer 0: item 0's results stored",
    "consumer 0: item 1's Q landed",
    "consumer 0: item 1's first S done",
    "consumer 0: item 8's results begin",
    "consumer 0: item 8's results stored",
    "consumer 0: item 9's Q landed",
    "consumer 0: item 9's first S done",
    "consumer 0: last step's rows ready",
    "consumer 0: last item's results begin",
    "consumer 1: last item's results begin",
    "consumer 0: last item's row sums exchanged",
    "consumer 0: last item's results stored",
    "consumer 0: done",
};
static_assert(sizeof kPointNames / sizeof kPointNames[0] == kPoints, "one name per point");

// The later change of item that the kSteady points record (the names above say 8).
inline constexpr int kSteadyItem = 8;

// The phases of a change of item, in the order of their points from kFirstResultsBegin and
// from kSteadyResultsBegin.
enum ItemChange : int { kChangeResultsBegin, kChangeResultsWritten, kChangeNextQ, kChangeNextS };
// (int{} on each side: arithmetic between two enumerations is deprecated in C++20.)
static_assert(int{kFirstResultsBegin} + int{kChangeNextS} == int{kSecondS} &&
                  int{kSteadyResultsBegin} + int{kChangeNextS} == int{kSteadyNextS},
              "each change of item's four points in ItemChange's order");

// The combine kernel's two points per block.
enum CombinePoint : int { kCombineEntry, kCombineExit, kCombinePoints };

// A block's first point is marked after its wait for the attention kernel (a block of a
// programmatic dependent launch may be resident well before: portable::CombineLaunch).
inline constexpr const char* kCombinePointNames[] = {"combine: block begins (waited)",
                                                     "combine: block done"};
static_assert(sizeof kCombinePointNames / sizeof kCombinePointNames[0] == kCombinePoints,
              "one name per combine point");

// An attention CTA's SM cycle counter (%clock64) at two of its points, read in the same instant
// as their %globaltimer marks: cycles over nanoseconds between them is the clock the CTA's SM
// ran at, whatever the clock NVML reports (perf-notes Next 34).
enum CyclePoint : int { kEntryCycles, kDoneCycles, kCyclePoints };

// CTAs (and combine blocks) past the first kMaxCtas record nothing.
inline constexpr int kMaxCtas = 1024;
// The records: [kMaxCtas][kPoints] attention marks, then [kMaxCtas][kCombinePoints], then
// [kMaxCtas][kCyclePoints] attention cycle counts.
inline constexpr size_t kAttendWords = size_t{kMaxCtas} * kPoints;
inline constexpr size_t kCombineWords = size_t{kMaxCtas} * kCombinePoints;
inline constexpr size_t kCycleWords = size_t{kMaxCtas} * kCyclePoints;
inline constexpr size_t kWords = kAttendWords + kCombineWords + kCycleWords;
inline constexpr size_t kBytes = kEnabled ? 8 * kWords : 0;
static_assert(kBytes % 256 == 0, "the workspace regions after the records stay aligned");

#if defined(__CUDACC__)
#if defined(SMLA_KERNEL_TIMELINE)
// Whether this CTA records a mark asked for `when`: records exist and the CTA has a row.
__device__ __forceinline__ bool records_mark(const uint64_t* records, bool when) {
  return when && records != nullptr && blockIdx.x < kMaxCtas;
}
#endif

// Records `point` (an index into this CTA's row of `records`) when `when` holds and records
// exist. `after` is a value the mark waits for, e.g. a loaded word: the timer is read only once
// that load has arrived. Without SMLA_KERNEL_TIMELINE it is empty, and its side-effect-free
// arguments compile to nothing.
__device__ __forceinline__ void mark(uint64_t* records, int row_words, int point, bool when,
                                     uint32_t after = 0) {
#if defined(SMLA_KERNEL_TIMELINE)
  if (!records_mark(records, when)) return;
  uint64_t t;
  asm volatile("{\n .reg .u32 after;\n mov.u32 after, %1;\n mov.u64 %0, %%globaltimer;\n}\n"
               : "=l"(t)
               : "r"(after)
               : "memory");
  records[blockIdx.x * row_words + point] = t;
#else
  (void)records, (void)row_words, (void)point, (void)when, (void)after;
#endif
}

// An attention CTA's point.
__device__ __forceinline__ void mark(uint64_t* records, Point point, bool when,
                                     uint32_t after = 0) {
  mark(records, kPoints, point, when, after);
}

// An attention CTA's point, as mark() records it, and in the same instant its SM's cycle count
// as `cycles`.
__device__ __forceinline__ void mark_with_cycles(uint64_t* records, Point point,
                                                 CyclePoint cycles, bool when) {
#if defined(SMLA_KERNEL_TIMELINE)
  if (!records_mark(records, when)) return;
  uint64_t t, c;
  asm volatile("mov.u64 %0, %%globaltimer;\n mov.u64 %1, %%clock64;" : "=l"(t), "=l"(c) : :
               "memory");
  records[blockIdx.x * kPoints + point] = t;
  records[kAttendWords + kCombineWords + blockIdx.x * kCyclePoints + cycles] = c;
#else
  (void)records, (void)point, (void)cycles, (void)when;
#endif
}

// Phase `phase` of a change of item, where `item` is the CTA's item at hand (the one whose
// results begin or are stored, or the next one whose Q landed or first S is done): recorded
// for the changes from item 0 and from item kSteadyItem.
__device__ __forceinline__ void mark_item_change(uint64_t* records, ItemChange phase, int item,
                                                 bool when, uint32_t after = 0) {
  const int from = phase < kChangeNextQ ? item : item - 1;
  mark(records, kPoints, int{kFirstResultsBegin} + int{phase}, when && from == 0, after);
  mark(records, kPoints, int{kSteadyResultsBegin} + int{phase}, when && from == kSteadyItem,
       after);
}
#endif

}  // namespace smla::timeline
