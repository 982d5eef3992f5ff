// A small TCP rendezvous: rank 0 of a job hands one blob (NCCL's 128-byte unique id) to every
// other rank, so NCCL bootstraps without MPI (research notes fleet-slurm.md §3.2). Each rank
// connects to rank 0's address, says who it is, and receives the blob; rank 0 waits until all
// ranks have it. Every wait has a deadline, and a stop flag ends it, so a missing rank never hangs
// the job.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace gpuvet {

struct RendezvousDeadline {
    std::chrono::steady_clock::time_point until;
    const std::atomic<bool>* stop = nullptr;  // a signal's flag; nullptr: none
};

class RendezvousServer {
public:
    // Listens on `bind_host` ("" = every address) and `port` (0: the kernel picks; see port()).
    RendezvousServer(const std::string& bind_host, int port);
    ~RendezvousServer();
    RendezvousServer(const RendezvousServer&) = delete;
    RendezvousServer& operator=(const RendezvousServer&) = delete;
    int port() const { return port_; }
    // Hands `blob` to ranks 1..world-1, each once; returns when all have it. Throws a runtime
    // error naming the ranks that did not come by the deadline, or a rank that is not of this job.
    void serve(const std::string& blob, int world, const RendezvousDeadline& deadline);

private:
    int fd_ = -1;
    int port_ = 0;
};

// A small key-value board for the ranks of one job, served by the process that started them (the
// fleet launcher, reachable from every node as srun's own address): rank 0 puts the NCCL ids under a
// key, every rank gets them; two testers put their queue-pair details and get each other's. Every
// request carries the job's token (a random string the launcher hands to its ranks), so a stray
// client neither reads nor writes. A get of a key not yet put is answered "not yet", and the client
// asks again until its deadline.
class RendezvousBoard {
public:
    RendezvousBoard(const std::string& bind_host, int port, std::string token);
    ~RendezvousBoard();
    RendezvousBoard(const RendezvousBoard&) = delete;
    RendezvousBoard& operator=(const RendezvousBoard&) = delete;
    int port() const { return port_; }
    // Serves requests until `stop` is set (polled every 50 ms).
    void serve_until(const std::atomic<bool>& stop);

private:
    int fd_ = -1;
    int port_ = 0;
    std::string token_;
};

// Puts `blob` under `key` on the board at host:port; gets the blob under `key`, waiting for it to be
// put. Both retry until the deadline (the board may not listen yet) and then throw a runtime error
// naming the address and what to check.
void board_put(const std::string& host, int port, const std::string& token, const std::string& key,
               const std::string& blob, const RendezvousDeadline& deadline);
std::string board_get(const std::string& host, int port, const std::string& token, const std::string& key,
                      const RendezvousDeadline& deadline);

// Rank `rank` of `world`: connects to rank 0 (retrying until the deadline: rank 0 may start
// later), and returns the blob. Throws a runtime error with the address and what to check.
std::string rendezvous_fetch(const std::string& host, int port, int rank, int world,
                             const RendezvousDeadline& deadline);

}  // namespace gpuvet
