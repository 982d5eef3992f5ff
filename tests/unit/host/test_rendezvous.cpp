// The TCP rendezvous that hands NCCL's unique id from rank 0 to the other ranks (host/rendezvous).
// Ranks are threads here; deadlines are generous and nothing asserts on time.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "core/error.hpp"
#include "host/rendezvous.hpp"

using namespace gpuvet;
using namespace std::chrono_literals;

namespace {
RendezvousDeadline in(std::chrono::milliseconds ms) { return {std::chrono::steady_clock::now() + ms, nullptr}; }
}  // namespace

TEST(Rendezvous, EveryRankGetsTheBlob) {
    RendezvousServer server("127.0.0.1", 0);
    ASSERT_GT(server.port(), 0);
    std::string blob(128, '\0');
    for (int i = 0; i < 128; ++i) blob[i] = char(i * 7 + 3);  // binary, with NULs, like ncclUniqueId
    const int world = 5;
    auto served = std::async(std::launch::async, [&] { server.serve(blob, world, in(60s)); });
    std::vector<std::future<std::string>> got;
    for (int r = world - 1; r >= 1; --r)  // any order
        got.push_back(std::async(std::launch::async,
                                 [&, r] { return rendezvous_fetch("127.0.0.1", server.port(), r, world, in(60s)); }));
    for (auto& g : got) EXPECT_EQ(g.get(), blob);
    served.get();
}

TEST(Rendezvous, ARankThatStartsFirstWaitsForRankZero) {
    // Pick a free port, release it, then fetch before anybody listens there.
    int port = 0;
    { port = RendezvousServer("127.0.0.1", 0).port(); }
    auto got = std::async(std::launch::async, [&] { return rendezvous_fetch("127.0.0.1", port, 1, 2, in(60s)); });
    std::this_thread::sleep_for(200ms);  // not a timing assertion: only lets the client try and fail first
    RendezvousServer server("127.0.0.1", port);
    server.serve("id", 2, in(60s));
    EXPECT_EQ(got.get(), "id");
}

TEST(Rendezvous, MissingRanksAreNamed) {
    RendezvousServer server("127.0.0.1", 0);
    auto one =
        std::async(std::launch::async, [&] { return rendezvous_fetch("127.0.0.1", server.port(), 1, 4, in(60s)); });
    try {
        server.serve("id", 4, in(1500ms));
        FAIL() << "serve returned with ranks missing";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("rank(s) 2, 3 of 4 did not reach the rendezvous"), std::string::npos)
            << e.what();
    }
    EXPECT_EQ(one.get(), "id");
}

TEST(Rendezvous, NobodyListeningIsAClearError) {
    int port = 0;
    { port = RendezvousServer("127.0.0.1", 0).port(); }
    try {
        rendezvous_fetch("127.0.0.1", port, 3, 8, in(500ms));
        FAIL() << "fetch returned without a server";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("rank 3 could not get the NCCL id from rank 0 at 127.0.0.1:"),
                  std::string::npos)
            << e.what();
        EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    }
}

TEST(Rendezvous, ARankOfAnotherJobIsRefused) {
    RendezvousServer server("127.0.0.1", 0);
    auto other = std::async(std::launch::async, [&] {
        try {
            return rendezvous_fetch("127.0.0.1", server.port(), 1, 3, in(2s));
        } catch (const Error&) {
            return std::string("refused");
        }
    });
    EXPECT_THROW(server.serve("id", 2, in(60s)), Error);
    EXPECT_EQ(other.get(), "refused");
}

TEST(Rendezvous, StopEndsTheWait) {
    RendezvousServer server("127.0.0.1", 0);
    std::atomic<bool> stop{true};
    EXPECT_THROW(server.serve("id", 2, {std::chrono::steady_clock::now() + 60s, &stop}), Interrupted);
}

namespace {

// A board served on a thread of its own until the test ends.
struct ServedBoard {
    RendezvousBoard board{"127.0.0.1", 0, "secret"};
    std::atomic<bool> done{false};
    std::thread t{[this] { board.serve_until(done); }};
    ~ServedBoard() {
        done = true;
        t.join();
    }
};

}  // namespace

TEST(RendezvousBoard, AGetWaitsForThePutAndEveryRankGetsTheBlob) {
    ServedBoard b;
    std::string blob(3 * 128, '\0');
    for (std::size_t i = 0; i < blob.size(); ++i) blob[i] = char(i * 13 + 1);  // binary, with NULs
    std::vector<std::future<std::string>> got;
    for (int r = 0; r < 4; ++r)  // asked before anything is there: "not yet", and again
        got.push_back(std::async(std::launch::async,
                                 [&] { return board_get("127.0.0.1", b.board.port(), "secret", "ids", in(60s)); }));
    std::this_thread::sleep_for(200ms);  // not a timing assertion: lets the gets ask first
    board_put("127.0.0.1", b.board.port(), "secret", "ids", blob, in(60s));
    for (auto& g : got) EXPECT_EQ(g.get(), blob);
    // A put retried after a lost answer is fine; another blob under the same key is not.
    EXPECT_NO_THROW(board_put("127.0.0.1", b.board.port(), "secret", "ids", blob, in(60s)));
    EXPECT_THROW(board_put("127.0.0.1", b.board.port(), "secret", "ids", "other", in(60s)), Error);
}

TEST(RendezvousBoard, AWrongTokenIsRefusedAndAMissingKeyTimesOutNamingIt) {
    ServedBoard b;
    board_put("127.0.0.1", b.board.port(), "secret", "qp/0", "x", in(60s));
    try {
        board_get("127.0.0.1", b.board.port(), "guess", "qp/0", in(60s));
        FAIL() << "a wrong token read the board";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("refused qp/0"), std::string::npos) << e.what();
    }
    try {
        board_get("127.0.0.1", b.board.port(), "secret", "qp/1", in(700ms));
        FAIL() << "a key never put was answered";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("for qp/1: qp/1 was not put yet"), std::string::npos) << e.what();
        EXPECT_NE(e.advice().find("SLURM_LAUNCH_NODE_IPADDR"), std::string::npos);
    }
}

TEST(RendezvousBoard, StopEndsAGet) {
    ServedBoard b;
    std::atomic<bool> stop{true};
    EXPECT_THROW(
        board_get("127.0.0.1", b.board.port(), "secret", "ids", {std::chrono::steady_clock::now() + 60s, &stop}),
        Interrupted);
}
