// deny_syscalls [--no-io-uring] [--no-odirect] [--no-space] -- COMMAND [ARGS...]
//
// Runs COMMAND under a seccomp filter that makes a kernel feature fail the way it fails on a
// machine without it, so that gpuvet's fallbacks run for real on a kernel that has everything:
//   --no-io-uring  io_uring_setup fails with ENOSYS, as on a kernel built without io_uring;
//   --no-odirect   openat with O_DIRECT fails with EINVAL, as on a filesystem without O_DIRECT;
//   --no-space     pwrite64 fails with ENOSPC, as on a filesystem that fills up during the test
//                  (gpuvet's own output goes through write(), which stays allowed).
// glibc's open() is openat on every current architecture, so openat is the one call to filter.
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#define ARCH_NOW AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH_NOW AUDIT_ARCH_AARCH64
#else
#error "deny_syscalls: add this architecture's AUDIT_ARCH value"
#endif

namespace {

sock_filter stmt(unsigned short code, unsigned k) { return BPF_STMT(code, k); }
sock_filter jump(unsigned short code, unsigned k, unsigned char jt, unsigned char jf) {
    return BPF_JUMP(code, k, jt, jf);
}

int usage() {
    std::fprintf(stderr, "usage: deny_syscalls [--no-io-uring] [--no-odirect] [--no-space] -- COMMAND [ARGS...]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    bool no_uring = false, no_direct = false, no_space = false;
    int i = 1;
    for (; i < argc; ++i) {
        if (std::strcmp(argv[i], "--no-io-uring") == 0) no_uring = true;
        else if (std::strcmp(argv[i], "--no-odirect") == 0) no_direct = true;
        else if (std::strcmp(argv[i], "--no-space") == 0) no_space = true;
        else if (std::strcmp(argv[i], "--") == 0) {
            ++i;
            break;
        } else return usage();
    }
    if (i >= argc || (!no_uring && !no_direct && !no_space)) return usage();

    const unsigned allow = SECCOMP_RET_ALLOW;
    std::vector<sock_filter> p;
    p.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
    p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, ARCH_NOW, 1, 0));
    p.push_back(stmt(BPF_RET | BPF_K, allow));
    p.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
    if (no_uring) {
        p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1));
        p.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS));
    }
    if (no_space) {
        p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, __NR_pwrite64, 0, 1));
        p.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSPC));
    }
    if (no_direct) {
        // flags is openat's third argument; O_DIRECT lives in its low 32 bits (little-endian).
        p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 3));
        p.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args) + 2 * sizeof(__u64)));
        p.push_back(jump(BPF_JMP | BPF_JSET | BPF_K, O_DIRECT, 0, 1));
        p.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL));
    }
    p.push_back(stmt(BPF_RET | BPF_K, allow));

    sock_fprog prog{static_cast<unsigned short>(p.size()), p.data()};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        std::fprintf(stderr, "deny_syscalls: cannot install the seccomp filter: %s\n", std::strerror(errno));
        return 77;  // ctest's skip code: this machine cannot run the test
    }
    execvp(argv[i], argv + i);
    std::fprintf(stderr, "deny_syscalls: cannot run %s: %s\n", argv[i], std::strerror(errno));
    return 127;
}
