// A fact read from a driver or the OS: a value, or the reason it is absent
// ("not supported", "no permission", "symbol nvmlDeviceGetRemappedRows missing", "GPU lost").
#pragma once
#include <optional>
#include <string>
#include <utility>

namespace gpuvet {

template <class T>
struct Fact {
    std::optional<T> value;
    std::string absent_reason;
    // False until a backend asked for the fact: a reading one backend does not have (InfoROM on AMD)
    // is left out of a report, not shown as absent. A flag, so no decision hangs on a reason's words.
    bool read = false;

    Fact() : absent_reason("not read") {}
    Fact(T v) : value(std::move(v)), read(true) {}  // NOLINT: a value converts to a present fact
    static Fact absent(std::string why) {
        Fact f;
        f.absent_reason = std::move(why);
        f.read = true;
        return f;
    }
    bool has_value() const { return value.has_value(); }
    explicit operator bool() const { return value.has_value(); }
    const T& operator*() const { return *value; }
    const T* operator->() const { return &*value; }
    T value_or(T d) const { return value ? *value : d; }
};

}  // namespace gpuvet
