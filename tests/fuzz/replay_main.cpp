// Replays every file of the given corpus folders through a libFuzzer entry point.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
    int n = 0;
    for (int i = 1; i < argc; ++i) {
        for (auto& e : std::filesystem::recursive_directory_iterator(argv[i])) {
            if (!e.is_regular_file()) continue;
            std::ifstream in(e.path(), std::ios::binary);
            std::vector<char> buf((std::istreambuf_iterator<char>(in)), {});
            LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(buf.data()), buf.size());
            ++n;
        }
    }
    std::printf("replayed %d inputs\n", n);
    return n > 0 ? 0 : 1;  // an empty corpus means the test is wired wrong
}
