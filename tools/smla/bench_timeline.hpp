// `smla bench --timeline`: a kernel timeline's records (src/cuda/timeline.hpp), read back from
// the workspace of a timeline build, as a table of when each point was reached.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace smla::cli {

// `records`: timeline::kAttendWords attention marks, then timeline::kCombineWords combine
// marks, %globaltimer ns (0: not reached), then timeline::kCycleWords attention cycle counts.
// Per point, the number of CTAs (or combine blocks) that reached it and when: min / 10th
// percentile / median / 90th percentile / max microseconds after the first CTA's entry; then
// the same statistics of each CTA's SM clock (MHz) from its entry to consumer 0's end.
// A call whose kernels marked nothing (another path ran it) says so.
std::string describe_timeline(const std::vector<uint64_t>& records);

}  // namespace smla::cli
