// The median the rank analyses use: the upper median (element n/2 of the sorted values),
// 0 of nothing. Takes its values by copy, since finding it reorders them.
#pragma once

#include <algorithm>
#include <vector>

namespace gpuperf {

template <class T>
T UpperMedian(std::vector<T> values) {
  if (values.empty()) return T{};
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  return values[mid];
}

}  // namespace gpuperf
