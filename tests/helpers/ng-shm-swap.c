/* ng-shm-swap -- a user who swaps root's SysV segment for a file of their
 * own under the same address, as fast as they can (tests/shell/
 * test-forged-sysv.sh).
 *
 *   ng-shm-swap victim [-s MIB] [--near N | --memfd]
 *   ng-shm-swap hold SHMID [-r READY]
 *   ng-shm-swap swap SHMID --uid UID --gid GID [--sysv-name | --memfd] [--touch]
 *               [--dwell USEC] [-r READY]
 *
 * victim  (root) creates a SysV segment of MIB MiB (default 8), mode 0644
 *         so that any user may attach it read-only, touches every page and
 *         detaches: it stays, attached by nobody, until ipcrm(1). Its shmid
 *         is chosen through /proc/sys/kernel/shm_next_id: the first free
 *         one from N (default 4096), so that a fresh tmpfs reaches the same
 *         inode number in a few thousand files (a host's shmids grow by
 *         32768 at every wrap of the index, up to 2^31); with --memfd a
 *         little ahead of the numbers the kernel's internal shm mount gives
 *         its files now, which a user's memfds then reach. Prints
 *         "shmid=ID key=K bytes=B".
 * hold    attaches SHMID read-only, reads every page (as a database's
 *         server process maps what it uses) and waits for SIGTERM: the
 *         segment's owner's own attacher.
 * swap    (started as root, runs as UID:GID) makes a file whose inode
 *         number is SHMID, sized as the segment: on a fresh tmpfs that no
 *         mount namespace holds (fsopen(2)/fsmount(2): it goes with the
 *         process), created as root before the drop, files made until one
 *         has the number (tmpfs numbers inodes per superblock since Linux
 *         5.9); --sysv-name names it SYSV<key> and unlinks it, so that its
 *         maps line reads like the segment's ("/SYSV00000000 (deleted)",
 *         inode SHMID) on another device; --memfd makes it a memfd, as the
 *         user, memfds made until one has the number: then it sits on the
 *         segment's own device, only its name differs. Then, as UID:GID,
 *         attaches SHMID read-only and until SIGTERM swaps that attach for
 *         a MAP_SHARED mapping of the file at the same address (MAP_FIXED)
 *         and back (shmat SHM_REMAP), pausing USEC microseconds (default
 *         0) in each (readers of its maps wait on every swap: without a
 *         pause they crawl). --touch gives the file a shared policy of
 *         its own (MPOL_PREFERRED, the node the helper runs on: the
 *         segment has none, "default"), writes every page of it first and
 *         maps it MAP_POPULATE: its pages are then in this process's page
 *         tables where the segment's would be (the segment's never are: it
 *         is never read), for what reads an attacher's page tables
 *         (move_pages(2), numa_maps); and a sample of the file itself
 *         tells it from the segment by that policy, on one node too.
 *         Prints "swaps=N" (round trips).
 *
 * READY receives "pid=P addr=0x... dev=MAJ:MIN ino=I" once the loop (or
 * the hold) runs, atomically (READY.tmp + rename).
 * Exit status: 0 on a clean stop, 1 on a usage or system error, 77 when
 * this kernel cannot do it (no fsopen(2), no such shmid or inode to be had).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/mempolicy.h>
#include <linux/mount.h>
#include <sched.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define NEXT_ID "/proc/sys/kernel/shm_next_id"
/* Files a tmpfs is asked for before it reaches the inode: a bound on the
 * loop, and on the shmid the victim may take. */
#define MAX_INODE 1048576

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *f)
{
	fputs("usage: ng-shm-swap victim [-s MIB] [--near N | --memfd]\n"
	      "       ng-shm-swap hold SHMID [-r READY]\n"
	      "       ng-shm-swap swap SHMID --uid UID --gid GID [--sysv-name | --memfd] [--touch]\n"
	      "                   [--dwell USEC] [-r READY]\n", f);
}

static int write_file_atomic(const char *path, const char *text)
{
	char tmp[4096];
	FILE *f;

	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
		return -1;
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fputs(text, f);
	if (fclose(f) != 0)
		return -1;
	return rename(tmp, path);
}

static int write_next_id(long id)
{
	FILE *f = fopen(NEXT_ID, "w");

	if (!f)
		return -1;
	fprintf(f, "%ld\n", id);
	return fclose(f);
}

static long read_next_id(void)
{
	long id = -1;
	FILE *f = fopen(NEXT_ID, "r");

	if (f) {
		if (fscanf(f, "%ld", &id) != 1)
			id = -1;
		fclose(f);
	}
	return id;
}

/* The shm mount hands inode numbers to each CPU in batches of this many. */
#define SHM_INO_BATCH 1024

/* A memfd made on CPU c: its fd, its stat in *st. */
static int memfd_on(int c, struct stat *st)
{
	cpu_set_t one;
	int fd;

	CPU_ZERO(&one);
	CPU_SET(c, &one);
	fd = sched_setaffinity(0, sizeof one, &one) == 0 ? memfd_create("swap", MFD_CLOEXEC) : -1;
	if (fd < 0 || fstat(fd, st) < 0) {
		fprintf(stderr, "ng-shm-swap: memfd_create on CPU %d: %s\n", c, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* The segment, with a shmid from near up (the first free index from it:
 * the kernel takes shm_next_id once and forgets it), tried again when
 * another creator took the number meanwhile. */
static int make_victim(size_t bytes, long near)
{
	for (int tries = 0; tries < 5; tries++) {
		int have_next = write_next_id(near) == 0;
		int id = shmget(IPC_PRIVATE, bytes, IPC_CREAT | IPC_EXCL | 0644);
		int e = errno;

		if (have_next && read_next_id() == near)
			write_next_id(-1);      /* not taken: as found */
		if (id < 0) {
			fprintf(stderr, "ng-shm-swap: shmget(%zu bytes): %s\n", bytes, strerror(e));
			return -1;
		}
		if (id >= near && id - near < 32768)
			return id;
		shmctl(id, IPC_RMID, NULL);
		if (!have_next) {
			fprintf(stderr, "ng-shm-swap: shmid %d is not near %ld and %s cannot be written: %s\n", id,
				near, NEXT_ID, strerror(errno));
			return -2;
		}
	}
	fprintf(stderr, "ng-shm-swap: no shmid near %ld in 5 tries\n", near);
	return -2;
}

/* A shmid the kernel's internal shm mount has not numbered a file with
 * yet, nor handed to a CPU: a batch past the furthest any CPU is at. */
static long memfd_near(void)
{
	cpu_set_t all;
	struct stat st;
	unsigned long furthest = 0;

	if (sched_getaffinity(0, sizeof all, &all) < 0) {
		fprintf(stderr, "ng-shm-swap: sched_getaffinity: %s\n", strerror(errno));
		return -1;
	}
	for (int c = 0; c < CPU_SETSIZE; c++) {
		int fd;
		if (!CPU_ISSET(c, &all))
			continue;
		if ((fd = memfd_on(c, &st)) < 0)
			return -1;
		close(fd);
		if ((unsigned long)st.st_ino > furthest)
			furthest = (unsigned long)st.st_ino;
	}
	sched_setaffinity(0, sizeof all, &all);
	return (long)((furthest / SHM_INO_BATCH + 2) * SHM_INO_BATCH + SHM_INO_BATCH / 2);
}

static int victim(size_t bytes, long near)
{
	struct shmid_ds ds;
	char *p;
	int id;

	if (near < 0 && (near = memfd_near()) < 0)
		return 1;
	if (near >= INT32_MAX - 32768) {
		fprintf(stderr, "ng-shm-swap: no shmid near %ld\n", near);
		return 77;
	}
	if ((id = make_victim(bytes, near)) < 0)
		return id == -2 ? 77 : 1;
	p = shmat(id, NULL, 0);
	if (p == (void *)-1 || shmctl(id, IPC_STAT, &ds) < 0) {
		fprintf(stderr, "ng-shm-swap: shmat/IPC_STAT %d: %s\n", id, strerror(errno));
		shmctl(id, IPC_RMID, NULL);
		return 1;
	}
	for (size_t off = 0; off < bytes; off += 4096)
		p[off] = (char)(off >> 12 | 1);
	shmdt(p);
	printf("shmid=%d key=%d bytes=%zu\n", id, (int)ds.shm_perm.__key, bytes);
	return 0;
}

static int ready_line(const char *ready, const void *addr, const struct stat *st)
{
	char line[256];

	snprintf(line, sizeof line, "pid=%d addr=%p dev=%u:%u ino=%llu\n", (int)getpid(), addr,
		 st ? major(st->st_dev) : 0, st ? minor(st->st_dev) : 0, st ? (unsigned long long)st->st_ino : 0);
	if (ready && write_file_atomic(ready, line) < 0) {
		fprintf(stderr, "ng-shm-swap: %s: %s\n", ready, strerror(errno));
		return -1;
	}
	return 0;
}

static int hold(int id, const char *ready)
{
	struct shmid_ds ds;
	volatile const char *p = shmat(id, NULL, SHM_RDONLY);

	if (p == (void *)-1 || shmctl(id, IPC_STAT, &ds) < 0) {
		fprintf(stderr, "ng-shm-swap: shmat %d: %s\n", id, strerror(errno));
		return 1;
	}
	/* every page resident already (victim touched them): no allocation */
	for (size_t off = 0; off < ds.shm_segsz; off += 4096)
		(void)p[off];
	if (ready_line(ready, (const void *)p, NULL) < 0)
		return 1;
	while (!stop_requested) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	shmdt((const void *)p);
	return 0;
}

/* A file of inode number ino on a tmpfs of its own (no namespace holds
 * the mount; it goes with the last descriptor), sized bytes; named
 * SYSV<key> and unlinked when name is set. */
static int file_with_inode(unsigned long ino, size_t bytes, const char *name, struct stat *st)
{
	int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	int mnt, fd = -1;

	if (fs < 0 || syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
	    (mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0)) < 0) {
		int e = errno;
		fprintf(stderr, "ng-shm-swap: a tmpfs of its own (fsopen/fsmount): %s\n", strerror(e));
		return e == ENOSYS || e == EPERM ? -2 : -1;
	}
	close(fs);
	for (unsigned long n = 0; n < MAX_INODE; n++) {
		fd = openat(mnt, "f", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 || fstat(fd, st) < 0) {
			fprintf(stderr, "ng-shm-swap: a file on the tmpfs: %s\n", strerror(errno));
			return -1;
		}
		if ((unsigned long)st->st_ino >= ino)
			break;
		close(fd);
		fd = -1;
		unlinkat(mnt, "f", 0);
	}
	if (fd < 0 || (unsigned long)st->st_ino != ino) {
		fprintf(stderr, "ng-shm-swap: the tmpfs gave inode %llu, not %lu\n",
			(unsigned long long)st->st_ino, ino);
		return -2;
	}
	if (ftruncate(fd, (off_t)bytes) < 0 || (name && (renameat(mnt, "f", mnt, name) < 0 ||
							 unlinkat(mnt, name, 0) < 0))) {
		fprintf(stderr, "ng-shm-swap: sizing or naming the file: %s\n", strerror(errno));
		return -1;
	}
	close(mnt);
	return fd;
}

/* A memfd of inode number ino: memfds sit on the kernel's internal shm
 * mount with the SysV segments, numbered by its counter of every shmem
 * file made since boot, which a SysV segment's inode (its shmid) may be
 * ahead of. The numbers go to each CPU in batches: on every CPU in turn,
 * memfds are made up to a batch's worth, until the CPU whose batch holds
 * ino gives it (a CPU past it is done). */
static int memfd_with_inode(unsigned long ino, size_t bytes, struct stat *st)
{
	cpu_set_t all;
	int past = 0, fd;

	if (sched_getaffinity(0, sizeof all, &all) < 0) {
		fprintf(stderr, "ng-shm-swap: sched_getaffinity: %s\n", strerror(errno));
		return -1;
	}
	const cpu_set_t allowed = all;
	int ncpu = CPU_COUNT(&all);
	for (unsigned long turns = 0; past < ncpu && turns < MAX_INODE / SHM_INO_BATCH; turns++) {
		for (int c = 0; c < CPU_SETSIZE; c++) {
			if (!CPU_ISSET(c, &all))
				continue;
			for (int k = 0; k < SHM_INO_BATCH; k++) {
				if ((fd = memfd_on(c, st)) < 0)
					return -1;
				if ((unsigned long)st->st_ino == ino)
					goto found;
				close(fd);
				if ((unsigned long)st->st_ino > ino) {
					CPU_CLR(c, &all);
					past++;
					break;
				}
			}
		}
	}
	sched_setaffinity(0, sizeof allowed, &allowed);
	fprintf(stderr, "ng-shm-swap: no memfd of inode %lu (every CPU past it: %llu)\n", ino,
		(unsigned long long)st->st_ino);
	return -2;
found:
	sched_setaffinity(0, sizeof allowed, &allowed);
	if (ftruncate(fd, (off_t)bytes) < 0) {
		fprintf(stderr, "ng-shm-swap: sizing the memfd: %s\n", strerror(errno));
		return -1;
	}
	return fd;
}

static int drop_to(uid_t uid, gid_t gid)
{
	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0) {
		fprintf(stderr, "ng-shm-swap: dropping to %u:%u: %s\n", (unsigned)uid, (unsigned)gid, strerror(errno));
		return -1;
	}
	if (uid != 0 && setresuid(0, 0, 0) == 0) {
		fputs("ng-shm-swap: still root after the drop\n", stderr);
		return -1;
	}
	/* what any process of the user is (a change of credentials left
	 * this one undumpable, its /proc files root's) */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	return 0;
}

static void dwell(long us)
{
	struct timespec ts = { 0, us * 1000 };

	if (us > 0)
		nanosleep(&ts, NULL);
}

static int swap(int id, long uid, long gid, int sysv_name, int memfd, int touch, long dwell_us, const char *ready)
{
	struct shmid_ds ds;
	struct stat st;
	char name[32];
	unsigned long long swaps = 0;
	void *addr;

	if (uid < 0 || gid < 0) {
		fputs("ng-shm-swap: swap needs --uid and --gid\n", stderr);
		return 1;
	}
	if (shmctl(id, IPC_STAT, &ds) < 0) {
		fprintf(stderr, "ng-shm-swap: IPC_STAT %d: %s\n", id, strerror(errno));
		return 1;
	}
	snprintf(name, sizeof name, "SYSV%08x", (unsigned)ds.shm_perm.__key);
	int fd = -1;
	if (!memfd && (fd = file_with_inode((unsigned long)id, ds.shm_segsz, sysv_name ? name : NULL, &st)) < 0)
		return fd == -2 ? 77 : 1;
	if (drop_to((uid_t)uid, (gid_t)gid) < 0)
		return 1;
	if (memfd && (fd = memfd_with_inode((unsigned long)id, ds.shm_segsz, &st)) < 0)
		return fd == -2 ? 77 : 1;
	if (touch) {
		/* the file's every page, written as the user: resident
		 * pages of theirs where the segment's would be read; and a
		 * shared policy of the file's own, which the segment lacks */
		char *w = mmap(NULL, ds.shm_segsz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		unsigned cpu, node;
		unsigned long mask[16] = { 0 };
		if (w == MAP_FAILED) {
			fprintf(stderr, "ng-shm-swap: writing the file: %s\n", strerror(errno));
			return 1;
		}
		if (getcpu(&cpu, &node) < 0 || node >= sizeof mask * 8) {
			fprintf(stderr, "ng-shm-swap: getcpu: %s\n", strerror(errno));
			return 1;
		}
		mask[node / (8 * sizeof mask[0])] = 1UL << (node % (8 * sizeof mask[0]));
		if (syscall(SYS_mbind, w, ds.shm_segsz, MPOL_PREFERRED, mask, sizeof mask * 8, 0) < 0) {
			fprintf(stderr, "ng-shm-swap: mbind MPOL_PREFERRED %u: %s\n", node, strerror(errno));
			return 1;
		}
		for (size_t off = 0; off < ds.shm_segsz; off += 4096)
			w[off] = 1;
		munmap(w, ds.shm_segsz);
	}
	addr = shmat(id, NULL, SHM_RDONLY);
	if (addr == (void *)-1) {
		fprintf(stderr, "ng-shm-swap: shmat %d as %ld: %s\n", id, uid, strerror(errno));
		return 1;
	}
	if (ready_line(ready, addr, &st) < 0)
		return 1;
	while (!stop_requested) {
		if (mmap(addr, ds.shm_segsz, PROT_READ, MAP_SHARED | MAP_FIXED | (touch ? MAP_POPULATE : 0), fd, 0) ==
		    MAP_FAILED) {
			fprintf(stderr, "ng-shm-swap: swap %llu: mmap: %s\n", swaps, strerror(errno));
			return 1;
		}
		dwell(dwell_us);
		if (shmat(id, addr, SHM_RDONLY | SHM_REMAP) == (void *)-1) {
			fprintf(stderr, "ng-shm-swap: swap %llu: shmat: %s\n", swaps, strerror(errno));
			return 1;
		}
		dwell(dwell_us);
		swaps++;
	}
	shmdt(addr);
	close(fd);
	printf("swaps=%llu\n", swaps);
	return 0;
}

int main(int argc, char **argv)
{
	enum { OPT_UID = 1000, OPT_GID, OPT_SYSV_NAME, OPT_MEMFD, OPT_NEAR, OPT_DWELL, OPT_TOUCH };
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "near", required_argument, NULL, OPT_NEAR },
		{ "uid", required_argument, NULL, OPT_UID },
		{ "gid", required_argument, NULL, OPT_GID },
		{ "sysv-name", no_argument, NULL, OPT_SYSV_NAME },
		{ "memfd", no_argument, NULL, OPT_MEMFD },
		{ "dwell", required_argument, NULL, OPT_DWELL },
		{ "touch", no_argument, NULL, OPT_TOUCH },
		{ "ready", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ready = NULL;
	unsigned long mib = 8;
	long uid = -1, gid = -1, near = 4096, id = -1, dwell_us = 0;
	int c, sysv_name = 0, memfd = 0, touch = 0;
	char *end;
	struct sigaction sa;

	while ((c = getopt_long(argc, argv, "s:r:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': mib = strtoul(optarg, NULL, 0); break;
		case OPT_NEAR: near = strtol(optarg, NULL, 0); break;
		case OPT_UID: uid = strtol(optarg, NULL, 0); break;
		case OPT_GID: gid = strtol(optarg, NULL, 0); break;
		case OPT_SYSV_NAME: sysv_name = 1; break;
		case OPT_MEMFD: memfd = 1; break;
		case OPT_TOUCH: touch = 1; break;
		case OPT_DWELL: dwell_us = strtol(optarg, NULL, 0); break;
		case 'r': ready = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	if (optind >= argc || mib == 0 || mib > 1024 || near < 1 || near >= MAX_INODE - 32768 ||
	    dwell_us < 0 || dwell_us > 999999) {
		usage(stderr);
		return 1;
	}
	const char *mode = argv[optind++];
	if (strcmp(mode, "victim") != 0) {
		if (optind >= argc || (id = strtol(argv[optind], &end, 10), *end) || id < 0 || id > INT32_MAX) {
			usage(stderr);
			return 1;
		}
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (strcmp(mode, "victim") == 0)
		return victim((size_t)mib << 20, memfd ? -1 : near);
	if (strcmp(mode, "hold") == 0)
		return hold((int)id, ready);
	if (strcmp(mode, "swap") == 0)
		return swap((int)id, uid, gid, sysv_name, memfd, touch, dwell_us, ready);
	usage(stderr);
	return 1;
}
