// A bounded history of samples for a sampler that may run for hours. At capacity, the older half
// is thinned to every second sample: recent data keeps the full rate (what a live view and the
// last minutes of a burn need) while older data grows coarser, so memory stays fixed and the
// whole run stays represented (the first sample is always kept). Nothing is dropped before the
// history first fills, so a run shorter than `capacity` samples sees every sample.
#pragma once
#include <cstddef>
#include <vector>

namespace gpuvet {

template <class T>
class SampleHistory {
public:
    explicit SampleHistory(std::size_t capacity) : capacity_(capacity < 4 ? 4 : capacity) { items_.reserve(capacity_); }

    void push(T item) {
        if (items_.size() == capacity_) thin_older_half();
        items_.push_back(std::move(item));
    }
    const std::vector<T>& items() const { return items_; }
    std::size_t size() const { return items_.size(); }
    std::size_t capacity() const { return capacity_; }
    bool empty() const { return items_.empty(); }
    const T& back() const { return items_.back(); }
    std::size_t thinned() const { return thinned_; }  // samples dropped so far

private:
    void thin_older_half() {
        std::size_t half = items_.size() / 2, kept = 0;
        for (std::size_t i = 0; i < half; i += 2) items_[kept++] = std::move(items_[i]);
        for (std::size_t i = half; i < items_.size(); ++i) items_[kept++] = std::move(items_[i]);
        thinned_ += items_.size() - kept;
        items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(kept), items_.end());
    }

    std::size_t capacity_;
    std::vector<T> items_;
    std::size_t thinned_ = 0;
};

}  // namespace gpuvet
