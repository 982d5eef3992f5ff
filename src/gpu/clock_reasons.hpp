// Moved to core/clock_reasons.hpp (the report model's bitmask series carry these bits).
#pragma once
#include "core/clock_reasons.hpp"
