#define _GNU_SOURCE
#include "CSystem.h"
#include <stdlib.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <sched.h>
#include <arpa/inet.h>

int csys_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static int ctl(int epfd, int op, int fd, uint32_t events) {
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = events;
    ev.data.fd = fd;
    return epoll_ctl(epfd, op, fd, &ev);
}

int csys_epoll_add(int epfd, int fd, uint32_t events) { return ctl(epfd, EPOLL_CTL_ADD, fd, events); }
int csys_epoll_mod(int epfd, int fd, uint32_t events) { return ctl(epfd, EPOLL_CTL_MOD, fd, events); }
int csys_epoll_del(int epfd, int fd) { return ctl(epfd, EPOLL_CTL_DEL, fd, 0); }

int csys_epoll_wait(int epfd, csys_event *out, int max, int timeout_ms) {
    struct epoll_event evs[256];
    if (max > 256) max = 256;
    int n = epoll_wait(epfd, evs, max, timeout_ms);
    for (int i = 0; i < n; i++) {
        out[i].events = evs[i].events;
        out[i].fd = evs[i].data.fd;
    }
    return n;
}

int csys_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
int csys_eventfd_signal(int fd) { uint64_t one = 1; return (int)write(fd, &one, sizeof one); }
int csys_eventfd_drain(int fd) { uint64_t v; return (int)read(fd, &v, sizeof v); }

long csys_gzip(const uint8_t *in, size_t len, int level, uint8_t **out) {
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
    uLong cap = deflateBound(&zs, (uLong)len);
    uint8_t *buf = malloc(cap);
    if (!buf) { deflateEnd(&zs); return -1; }
    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)len;
    zs.next_out = buf;
    zs.avail_out = (uInt)cap;
    int rc = deflate(&zs, Z_FINISH);
    long produced = (long)zs.total_out;
    deflateEnd(&zs);
    if (rc != Z_STREAM_END) { free(buf); return -1; }
    *out = buf;
    return produced;
}

long csys_gunzip(const uint8_t *in, size_t len, size_t max_out, uint8_t **out) {
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 15 + 32) != Z_OK) return -1;
    size_t cap = len * 4 + 64;
    if (cap > max_out) cap = max_out;
    uint8_t *buf = malloc(cap);
    if (!buf) { inflateEnd(&zs); return -1; }
    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)len;
    for (;;) {
        zs.next_out = buf + zs.total_out;
        zs.avail_out = (uInt)(cap - zs.total_out);
        int rc = inflate(&zs, Z_NO_FLUSH);
        if (rc == Z_STREAM_END) break;
        if (rc != Z_OK && rc != Z_BUF_ERROR) { free(buf); inflateEnd(&zs); return -1; }
        if (zs.avail_out == 0) {
            if (cap >= max_out) { free(buf); inflateEnd(&zs); return -1; }
            size_t ncap = cap * 2 > max_out ? max_out : cap * 2;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) { free(buf); inflateEnd(&zs); return -1; }
            buf = nb; cap = ncap;
        } else if (zs.avail_in == 0) { free(buf); inflateEnd(&zs); return -1; }
    }
    long produced = (long)zs.total_out;
    inflateEnd(&zs);
    *out = buf;
    return produced;
}


void csys_set_thread_name(const char *name) {
    char short_name[16];
    strncpy(short_name, name, sizeof(short_name) - 1);
    short_name[sizeof(short_name) - 1] = 0;
    pthread_setname_np(pthread_self(), short_name);
}

// The process's CPUs are the main thread's (tid = pid): event loops pin only themselves,
// and a thread they start inherits their single CPU, so the caller's own mask can mislead.
int csys_affinity_cpu_count(void) {
    cpu_set_t set;
    if (sched_getaffinity(getpid(), sizeof(set), &set) != 0) return 0;
    return CPU_COUNT(&set);
}

int csys_thread_cpu_count(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
    return CPU_COUNT(&set);
}

int csys_accept_peer(int fd, uint64_t *high, uint64_t *low) {
    struct sockaddr_storage addr;
    socklen_t len = sizeof(addr);
    memset(&addr, 0, sizeof(addr));
    int client = accept4(fd, (struct sockaddr *)&addr, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    *high = 0;
    *low = 0;
    if (client < 0) return client;
    if (addr.ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in4 = (const struct sockaddr_in *)&addr;
        *low = 0xffff00000000ULL | (uint64_t)ntohl(in4->sin_addr.s_addr);
    } else if (addr.ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        const uint8_t *b = ((const struct sockaddr_in6 *)&addr)->sin6_addr.s6_addr;
        for (int i = 0; i < 8; i++) *high = (*high << 8) | b[i];
        for (int i = 8; i < 16; i++) *low = (*low << 8) | b[i];
    }
    return client;
}

#include <linux/filter.h>

int csys_reuseport_by_cpu(int fd, const int *cpus, int n) {
    // The listener of a reuseport group is chosen by the CPU that handles the SYN:
    // A = cpu; "if A == cpus[i] return i" for each loop; anything else returns an index
    // past the group, which makes the kernel fall back to its hash.
    if (n < 1 || n > 1024) return -1;
    struct sock_filter code[2 * 1024 + 2];
    int k = 0;
    code[k++] = (struct sock_filter){BPF_LD | BPF_W | BPF_ABS, 0, 0, (uint32_t)(SKF_AD_OFF + SKF_AD_CPU)};
    for (int i = 0; i < n; i++) {
        code[k++] = (struct sock_filter){BPF_JMP | BPF_JEQ | BPF_K, 0, 1, (uint32_t)cpus[i]};
        code[k++] = (struct sock_filter){BPF_RET | BPF_K, 0, 0, (uint32_t)i};
    }
    code[k++] = (struct sock_filter){BPF_RET | BPF_K, 0, 0, 0xffffffffu};
    struct sock_fprog prog = {.len = (unsigned short)k, .filter = code};
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof(prog));
}

int csys_allowed_cpus(int *out, int max) {
    cpu_set_t set;
    if (sched_getaffinity(getpid(), sizeof(set), &set) != 0) return -1;
    int n = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++) {
        if (CPU_ISSET(cpu, &set)) out[n++] = cpu;
    }
    return n;
}

int csys_pin_thread(int cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return -1;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof(one), &one);
}

// SCHED_BATCH: a thread woken while another runs on its CPU does not preempt it; it runs
// when that one blocks or its slice ends. Unprivileged; SCHED_OTHER undoes it.
int csys_sched_batch(int on) {
    struct sched_param param = {0};
    return sched_setscheduler(0, on ? SCHED_BATCH : SCHED_OTHER, &param);
}

int csys_incoming_cpu(int fd) {
    int cpu = -1;
    socklen_t len = sizeof(cpu);
    if (getsockopt(fd, SOL_SOCKET, SO_INCOMING_CPU, &cpu, &len) != 0) return -1;
    return cpu;
}

int csys_thread_allow_cpus_once(const int *cpus, int n) {
    static __thread int done = 0;
    if (done) return 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < n; i++) {
        if (cpus[i] >= 0 && cpus[i] < CPU_SETSIZE) CPU_SET(cpus[i], &set);
    }
    int rc = sched_setaffinity(0, sizeof(set), &set);
    if (rc == 0) done = 1;
    csys_sched_batch(0);  // nor does it keep the loop's scheduling policy
    return rc;
}

/* The calling thread's row: its CPU, read again every 64th use (sched_getcpu reads the
 * thread's rseq area, no system call). A pinned loop never moves; a thread that does keeps
 * counting exactly, on a row another CPU may share for a while. */
static __thread int cached_stripe = -1;
static __thread unsigned stripe_uses;

static inline int stripe(int mask) {
    if (cached_stripe < 0 || (++stripe_uses & 63) == 0) {
        int cpu = sched_getcpu();
        cached_stripe = cpu < 0 ? 0 : cpu;
    }
    return cached_stripe & mask;
}

void csys_striped_add(int64_t *slots, int row, int mask, int index, int64_t n) {
    __atomic_fetch_add(slots + (size_t)stripe(mask) * (size_t)row + (size_t)index, n, __ATOMIC_RELAXED);
}

uint64_t csys_striped_next(int64_t *slots, int row, int mask, int index) {
    int s = stripe(mask);
    uint64_t value = (uint64_t)__atomic_add_fetch(slots + (size_t)s * (size_t)row + (size_t)index, 1, __ATOMIC_RELAXED);
    /* 36 bits in all: the row on top, in as few bits as the rows need (none for one row). */
    int bits = 36 - __builtin_popcount((unsigned)mask & 0xF);
    return (uint64_t)(s & 0xF) << bits | (value & ((UINT64_C(1) << bits) - 1));
}

int64_t csys_striped_load(const int64_t *slot) { return __atomic_load_n(slot, __ATOMIC_RELAXED); }

#include <spawn.h>
#include <fcntl.h>

/// posix_spawn with only fds 0-2 passed on (stdin from /dev/null; stdout and stderr to the
/// given fds, or /dev/null for -1), in `dir` when not NULL: how the tests start processes,
/// since Foundation's Process.run over-reads /proc/self/fd entries now and then and crashes.
int csys_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[], const char *dir, int out_fd, int err_fd) {
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0) return -1;
    int rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0) rc = out_fd >= 0 ? posix_spawn_file_actions_adddup2(&fa, out_fd, 1) : posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (rc == 0) rc = err_fd >= 0 ? posix_spawn_file_actions_adddup2(&fa, err_fd, 2) : posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    if (rc == 0 && dir) rc = posix_spawn_file_actions_addchdir_np(&fa, dir);
    if (rc == 0) rc = posix_spawn(pid, path, &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

int csys_heap_trim(void) { return malloc_trim(0); }

int csys_heap_limit_arenas(int count) { return mallopt(M_ARENA_MAX, count); }

int csys_heap_arena_count(void) {
    // malloc_info's XML names each arena once as <heap nr="N">.
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    if (!out) return -1;
    int rc = malloc_info(0, out);
    fclose(out);
    int count = 0;
    if (rc == 0 && text) {
        for (const char *at = text; (at = strstr(at, "<heap nr=")) != NULL; at += 9) count++;
    } else {
        count = -1;
    }
    free(text);
    return count;
}
