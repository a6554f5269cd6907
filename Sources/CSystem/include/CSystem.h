// System calls Swift cannot import cleanly (packed epoll_event, eventfd) and zlib.
#ifndef FEEDPROXY_CSYSTEM_H
#define FEEDPROXY_CSYSTEM_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <zlib.h>

/// One readiness event, unpacked so Swift can read it.
typedef struct {
    uint32_t events;
    int32_t fd;
} csys_event;

int csys_epoll_create(void);
int csys_epoll_add(int epfd, int fd, uint32_t events);
int csys_epoll_mod(int epfd, int fd, uint32_t events);
int csys_epoll_del(int epfd, int fd);
/// Waits for events and copies them into `out`; returns the count or -1.
int csys_epoll_wait(int epfd, csys_event *out, int max, int timeout_ms);

/// accept4 with SOCK_NONBLOCK and SOCK_CLOEXEC (a GNU extension Swift does not see),
/// also returning the peer address as 128 bits, most significant half first (IPv4
/// mapped into ::ffff:0:0/96); both halves are 0 when it is not IP.
int csys_accept_peer(int fd, uint64_t *high, uint64_t *low);
int csys_eventfd(void);
int csys_eventfd_signal(int fd);
int csys_eventfd_drain(int fd);

/// gzip-compresses `len` bytes into a malloc'ed buffer; returns its size or -1.
/// The caller frees `*out` with free().
long csys_gzip(const uint8_t *in, size_t len, int level, uint8_t **out);
/// gunzips (for tests and upstream checks); same contract as csys_gzip.
long csys_gunzip(const uint8_t *in, size_t len, size_t max_out, uint8_t **out);

/// glibc's malloc_trim(0): gives the arenas' whole free pages back; 1 if any was.
int csys_heap_trim(void);
/// Caps the malloc arenas glibc makes (mallopt M_ARENA_MAX); 1 on success.
int csys_heap_limit_arenas(int count);
/// The malloc arenas in use (from malloc_info), or -1 if unknown.
int csys_heap_arena_count(void);

/// Names the calling thread (pthread_setname_np, a GNU extension); at most 15 bytes are kept.
void csys_set_thread_name(const char *name);
/// Processors this process may run on (the main thread's CPU affinity mask), or 0 if unknown.
int csys_affinity_cpu_count(void);
/// Processors the calling thread may run on, or 0 if unknown.
int csys_thread_cpu_count(void);
/// Attaches a classic BPF program to a SO_REUSEPORT group that picks listener i when
/// the connection's SYN is handled on cpus[i] (other CPUs: the kernel's hash).
int csys_reuseport_by_cpu(int fd, const int *cpus, int n);
/// Writes the ids of the CPUs this process (its main thread) may run on into `out`; returns how many, or -1.
int csys_allowed_cpus(int *out, int max);
/// The CPU that last handled this socket's incoming packets, or -1.
int csys_incoming_cpu(int fd);
/// Sets the calling thread's affinity to `cpus`, the first time it is called on that thread.
int csys_thread_allow_cpus_once(const int *cpus, int n);
/// Pins the calling thread to one CPU.
int csys_pin_thread(int cpu);
/// Sets the calling thread's policy: SCHED_BATCH (on = 1) or SCHED_OTHER (0); 0 on success.
int csys_sched_batch(int on);

/// Striped counters (`Primitives.StripedCounters`): `slots` holds one row of `row` 64-bit
/// counters per stripe, `mask + 1` stripes; the calling thread's CPU picks the row.
/// Adds `n` to counter `index` of this CPU's row (relaxed: counts, not ordering).
void csys_striped_add(int64_t *slots, int row, int mask, int index, int64_t n);
/// Adds one to counter `index` of this CPU's row; returns the row above the row's new value,
/// below 2^36 (the row takes log2(mask + 1) of the bits): unique across calls until a row
/// wraps (2^35 calls on one row with two rows).
uint64_t csys_striped_next(int64_t *slots, int row, int mask, int index);
/// Relaxed load of one slot.
int64_t csys_striped_load(const int64_t *slot);

/// Starts `path` (fds 0-2 only; see shim.c); 0 or an errno value.
int csys_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[], const char *dir, int out_fd, int err_fd);

#endif
