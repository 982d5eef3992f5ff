# Turns a data file into a C++ source that defines
#   std::string_view gpuvet::embedded::<SYMBOL>()
# so data/*.toml and kernels/*.ptx travel inside the binary. Runs at build time.
if(NOT DEFINED INPUT OR NOT DEFINED OUTPUT OR NOT DEFINED SYMBOL)
  message(FATAL_ERROR "Embed.cmake needs INPUT, OUTPUT and SYMBOL")
endif()
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR size "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${INPUT} by cmake/Embed.cmake. Do not edit.
#include <string_view>
namespace gpuvet::embedded {
static const unsigned char data_[] = {
${bytes}0x00};
std::string_view ${SYMBOL}() { return {reinterpret_cast<const char*>(data_), ${size}}; }
}  // namespace gpuvet::embedded
")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
