/* ng-shm-workload -- a shared-memory workload that the e2e suite controls.
 *
 *   ng-shm-workload sysv|file PATH|anon [options]
 *
 * Creates one shared segment, touches every page of it (so the pages are
 * placed by the memory policy of this process: run it under
 * `numactl --membind=N` / `--interleave=...` or inside a cpuset cgroup),
 * forks N children that stay attached and sleep, reports what it made and
 * stays alive until SIGTERM/SIGINT or until the --stop file appears. On the
 * way out it ends its children, detaches and removes the segment.
 *
 *   sysv        SysV segment (shmget/shmat); --huge adds SHM_HUGETLB
 *   file PATH   a file (e.g. /dev/shm/ora_granule_1) created, sized and
 *               mapped MAP_SHARED, like Oracle AMM granules in /dev/shm
 *   anon        MAP_SHARED|MAP_ANONYMOUS (--huge: MAP_HUGETLB), inherited by
 *               the children, like PostgreSQL's main shared memory
 *
 * Options:
 *   -s, --size MIB     segment size in MiB (default 32)
 *   -H, --huge         2 MiB hugetlb pages (sysv: SHM_HUGETLB, anon: MAP_HUGETLB)
 *       --huge-1g      1 GiB hugetlb pages
 *       --huge-try     sysv: SHM_HUGETLB, and 4 KiB pages when the pool cannot
 *                      hold the segment or the process may not create one
 *                      (EPERM) -- the silent fallback of databases
 *   -k, --key KEY      SysV key (default IPC_PRIVATE)
 *   -p, --procs N      attached child processes besides this one (default 2)
 *       --split A,B    bind the first three quarters of the segment to node A
 *                      and the last quarter to node B (mbind(2) MPOL_BIND
 *                      before the first touch): a known 3:1 placement
 *       --child-touch  each child reads every page before the report line, so
 *                      that it maps the whole segment in its own page tables
 *                      (as database server processes do: real page-table cost)
 *       --pin          pin the whole segment (io_uring fixed buffers, a long-term
 *                      pin as RDMA registration makes) until exit: its pages
 *                      cannot migrate (hugetlb segments: io_uring refuses other
 *                      file-backed memory)
 *       --detach       once the children are attached, this process (the one
 *                      that touched every page) detaches: the pages stay
 *                      resident, and the attachers left map none of them
 *                      (fork(2) copies no page tables of a shared mapping),
 *                      as when a database's filler exits
 *       --touch MIB    touch only the first MIB of the segment at first (the
 *                      rest stays reserved and not faulted, as a database's
 *                      SGA or buffers before they are used)
 *       --touch-rest FILE  once FILE exists, touch the rest of the segment
 *                      and write FILE.done ("touched N pages"); a hugepage
 *                      the pools cannot serve kills it with SIGBUS instead
 *   -r, --ready FILE   when everything is attached, write the report line to
 *                      FILE (atomically: FILE.tmp + rename)
 *   -S, --stop FILE    exit cleanly as soon as FILE exists
 *       --keep         do not remove the segment/file at exit
 *   -v, --verbose      print the segment's /proc/self/numa_maps line to stderr
 *
 * Report line (stdout and --ready):
 *   pid=P kind=sysv|file|anon_shared shmid=ID key=K bytes=B page_kib=K addr=0x... nattch=N+1 children=c1,c2
 * Exit status: 0 on a clean stop, 1 on a usage or system error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <numaif.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/io_uring.h>

#ifndef SHM_HUGE_SHIFT
#define SHM_HUGE_SHIFT 26
#endif
#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

#define MAX_PROCS 64

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *f)
{
	fputs("usage: ng-shm-workload sysv|file PATH|anon [-s MIB] [-H|--huge-1g|--huge-try] [-k KEY]\n"
	      "       [-p N] [--split A,B] [--child-touch] [--pin] [--detach] [--touch MIB] [--touch-rest FILE]\n"
	      "       [-r READY_FILE] [-S STOP_FILE] [--keep] [-v]\n", f);
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

static void print_numa_maps_line(const void *addr)
{
	char want[64], line[8192];
	FILE *f = fopen("/proc/self/numa_maps", "r");

	snprintf(want, sizeof want, "%lx ", (unsigned long)addr);
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, want, strlen(want)) == 0)
			fprintf(stderr, "numa_maps: %s", line);
	if (f)
		fclose(f);
}

static void child_loop(const char *stop_file)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	while (!stop_requested && !(stop_file && access(stop_file, F_OK) == 0)) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		if (getppid() == 1)     /* parent gone: do not linger */
			break;
	}
	_exit(0);
}

static unsigned long mib = 32, page_kib = 4;
static long nprocs = 2;
static key_t key = IPC_PRIVATE;
static const char *ready, *stop_file, *touch_rest;
static unsigned long touch_mib;
static int keep, verbose, huge, huge_try, child_touch, pin, detach;
static int split_a = -1, split_b = -1;

/* Options may come before and after the mode. Returns -1 to go on, else
 * the exit status. */
static int parse_options(int argc, char **argv)
{
	enum { OPT_HUGE1G = 1000, OPT_KEEP, OPT_HUGETRY, OPT_CHILD_TOUCH, OPT_PIN, OPT_SPLIT, OPT_DETACH, OPT_TOUCH,
	       OPT_TOUCH_REST };
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "huge", no_argument, NULL, 'H' },
		{ "huge-1g", no_argument, NULL, OPT_HUGE1G },
		{ "huge-try", no_argument, NULL, OPT_HUGETRY },
		{ "key", required_argument, NULL, 'k' },
		{ "procs", required_argument, NULL, 'p' },
		{ "ready", required_argument, NULL, 'r' },
		{ "stop", required_argument, NULL, 'S' },
		{ "keep", no_argument, NULL, OPT_KEEP },
		{ "child-touch", no_argument, NULL, OPT_CHILD_TOUCH },
		{ "pin", no_argument, NULL, OPT_PIN },
		{ "detach", no_argument, NULL, OPT_DETACH },
		{ "split", required_argument, NULL, OPT_SPLIT },
		{ "touch", required_argument, NULL, OPT_TOUCH },
		{ "touch-rest", required_argument, NULL, OPT_TOUCH_REST },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "+s:Hk:p:r:S:vh", opts, NULL)) != -1) {
		switch (c) {
		case 's': mib = strtoul(optarg, NULL, 0); break;
		case 'H': huge = 1; page_kib = 2048; break;
		case OPT_HUGE1G: huge = 1; page_kib = 1048576; break;
		case OPT_HUGETRY: huge = huge_try = 1; page_kib = 2048; break;
		case 'k': key = (key_t)strtol(optarg, NULL, 0); break;
		case 'p': nprocs = strtol(optarg, NULL, 0); break;
		case 'r': ready = optarg; break;
		case 'S': stop_file = optarg; break;
		case OPT_KEEP: keep = 1; break;
		case OPT_CHILD_TOUCH: child_touch = 1; break;
		case OPT_PIN: pin = 1; break;
		case OPT_DETACH: detach = 1; break;
		case OPT_TOUCH: touch_mib = strtoul(optarg, NULL, 0); break;
		case OPT_TOUCH_REST: touch_rest = optarg; break;
		case OPT_SPLIT:
			if (sscanf(optarg, "%d,%d", &split_a, &split_b) != 2 || split_a < 0 || split_b < 0 ||
			    split_a >= 64 || split_b >= 64) {
				fprintf(stderr, "ng-shm-workload: --split A,B: two node numbers below 64\n");
				return 1;
			}
			break;
		case 'v': verbose = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	const char *path = NULL, *mode;
	int c, shmid = -1, fd = -1, rc = 0;
	pid_t children[MAX_PROCS];
	int nchildren = 0;
	size_t bytes, step;
	char *p = NULL;
	char report[1024], kids[MAX_PROCS * 12 + 1] = "";
	struct sigaction sa;

	if ((c = parse_options(argc, argv)) >= 0)
		return c;
	if (optind >= argc) {
		usage(stderr);
		return 1;
	}
	mode = argv[optind++];
	if (strcmp(mode, "file") == 0) {
		if (optind >= argc) {
			usage(stderr);
			return 1;
		}
		path = argv[optind++];
	} else if (strcmp(mode, "sysv") != 0 && strcmp(mode, "anon") != 0) {
		usage(stderr);
		return 1;
	}
	/* options may also follow the mode */
	if ((c = parse_options(argc, argv)) >= 0)
		return c;
	if (mib == 0 || nprocs < 0 || nprocs > MAX_PROCS) {
		fprintf(stderr, "ng-shm-workload: bad --size or --procs\n");
		return 1;
	}
	if (huge && strcmp(mode, "file") == 0) {
		fprintf(stderr, "ng-shm-workload: --huge is for sysv and anon (use a hugetlbfs PATH)\n");
		return 1;
	}
	bytes = (size_t)mib << 20;
	step = (size_t)page_kib << 10;
	if (bytes % step) {
		fprintf(stderr, "ng-shm-workload: size is not a multiple of the page size\n");
		return 1;
	}

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (strcmp(mode, "sysv") == 0) {
		int flags = IPC_CREAT | IPC_EXCL | 0600;
		if (huge)
			flags |= SHM_HUGETLB | (page_kib == 1048576 ? (30 << SHM_HUGE_SHIFT) : 0);
		shmid = shmget(key, bytes, flags);
		/* ENOMEM: the pool is short; EPERM: no right to SHM_HUGETLB
		 * (neither CAP_IPC_LOCK nor vm.hugetlb_shm_group). Databases
		 * fall back to 4 KiB pages on either. */
		if (shmid < 0 && huge_try && (errno == ENOMEM || errno == EPERM)) {
			huge = 0;
			page_kib = 4;
			step = 4096;
			shmid = shmget(key, bytes, IPC_CREAT | IPC_EXCL | 0600);
		}
		if (shmid < 0) {
			fprintf(stderr, "ng-shm-workload: shmget(%zu bytes%s): %s\n", bytes,
				huge ? ", SHM_HUGETLB" : "", strerror(errno));
			return 1;
		}
		p = shmat(shmid, NULL, 0);
		if (p == (void *)-1) {
			fprintf(stderr, "ng-shm-workload: shmat: %s\n", strerror(errno));
			shmctl(shmid, IPC_RMID, NULL);
			return 1;
		}
	} else if (strcmp(mode, "file") == 0) {
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
			fprintf(stderr, "ng-shm-workload: %s: %s\n", path, strerror(errno));
			if (fd >= 0)
				unlink(path);
			return 1;
		}
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			fprintf(stderr, "ng-shm-workload: mmap %s: %s\n", path, strerror(errno));
			unlink(path);
			return 1;
		}
	} else {
		int flags = MAP_SHARED | MAP_ANONYMOUS;
		if (huge)
			flags |= MAP_HUGETLB | (page_kib == 1048576 ? (30 << MAP_HUGE_SHIFT) : 0);
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
		if (p == MAP_FAILED) {
			fprintf(stderr, "ng-shm-workload: mmap anonymous shared: %s\n", strerror(errno));
			return 1;
		}
	}

	if (split_a >= 0) {
		size_t first = bytes / 4 * 3 / (page_kib * 1024) * (page_kib * 1024);
		unsigned long ma = 1UL << split_a, mb = 1UL << split_b;
		if (mbind(p, first, MPOL_BIND, &ma, 64, 0) != 0 ||
		    mbind(p + first, bytes - first, MPOL_BIND, &mb, 64, 0) != 0) {
			fprintf(stderr, "ng-shm-workload: mbind --split %d,%d: %s\n", split_a, split_b, strerror(errno));
			return 1;
		}
	}

	/* First touch: this is where the policy decides the node of each page. */
	size_t touched_bytes = bytes;
	if (touch_mib) {
		touched_bytes = (size_t)touch_mib << 20;
		if (touched_bytes > bytes || touched_bytes % step) {
			fprintf(stderr, "ng-shm-workload: --touch: more than the segment or not whole pages\n");
			rc = 1;
			goto out;
		}
	}
	for (size_t off = 0; off < touched_bytes; off += step)
		p[off] = (char)(off / step);

	int touched[2] = { -1, -1 };
	if (child_touch && pipe(touched) != 0) {
		fprintf(stderr, "ng-shm-workload: pipe: %s\n", strerror(errno));
		rc = 1;
		goto out;
	}
	for (long i = 0; i < nprocs; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			fprintf(stderr, "ng-shm-workload: fork: %s\n", strerror(errno));
			rc = 1;
			goto out;
		}
		if (pid == 0) {
			if (child_touch) {
				volatile char sum = 0;
				for (size_t off = 0; off < bytes; off += step)
					sum += p[off];
				(void)sum;
				if (write(touched[1], "t", 1) != 1)
					_exit(1);
			}
			child_loop(stop_file);
		}
		children[nchildren++] = pid;
		snprintf(kids + strlen(kids), sizeof kids - strlen(kids), "%s%d",
			 i ? "," : "", (int)pid);
	}

	/* every child has mapped the whole segment before the report */
	for (int i = 0; child_touch && i < nchildren; i++) {
		char t;
		if (read(touched[0], &t, 1) != 1) {
			fprintf(stderr, "ng-shm-workload: a child did not touch the segment\n");
			rc = 1;
			goto out;
		}
	}

	/* A long-term pin of every page: io_uring_setup(2) with one entry, the
	 * segment registered as one fixed buffer (IORING_REGISTER_BUFFERS = 0);
	 * the ring stays open, so the pages stay pinned, until exit. */
	if (pin) {
		struct io_uring_params params;
		struct iovec iov = { .iov_base = p, .iov_len = bytes };
		memset(&params, 0, sizeof params);
		long ring = syscall(SYS_io_uring_setup, 1, &params);
		if (ring < 0 || syscall(SYS_io_uring_register, (int)ring, IORING_REGISTER_BUFFERS, &iov, 1) < 0) {
			fprintf(stderr, "ng-shm-workload: --pin: io_uring: %s\n", strerror(errno));
			rc = 1;
			goto out;
		}
	}

	void *addr = p;
	if (detach) {
		if (pin || child_touch || nchildren == 0) {
			fprintf(stderr, "ng-shm-workload: --detach needs children and neither --pin nor --child-touch\n");
			rc = 1;
			goto out;
		}
		if (shmid >= 0 ? shmdt(p) : munmap(p, bytes)) {
			fprintf(stderr, "ng-shm-workload: --detach: %s\n", strerror(errno));
			rc = 1;
			goto out;
		}
		p = NULL;
	}
	snprintf(report, sizeof report,
		 "pid=%d kind=%s shmid=%d key=%d bytes=%zu page_kib=%lu addr=%p nattch=%d children=%s%s%s\n",
		 (int)getpid(), strcmp(mode, "anon") == 0 ? "anon_shared" : mode, shmid, (int)key,
		 bytes, page_kib, addr, nchildren + (detach ? 0 : 1), kids, path ? " path=" : "", path ? path : "");
	fputs(report, stdout);
	fflush(stdout);
	if (verbose && p)
		print_numa_maps_line(p);
	if (ready && write_file_atomic(ready, report) != 0) {
		fprintf(stderr, "ng-shm-workload: cannot write %s: %s\n", ready, strerror(errno));
		rc = 1;
		goto out;
	}

	while (!stop_requested && !(stop_file && access(stop_file, F_OK) == 0)) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		if (touch_rest && p && touched_bytes < bytes && access(touch_rest, F_OK) == 0) {
			char done[4096], msg[64];
			size_t n = 0;
			for (size_t off = touched_bytes; off < bytes; off += step, n++)
				p[off] = (char)(off / step);    /* SIGBUS here when no node may serve it */
			touched_bytes = bytes;
			snprintf(done, sizeof done, "%s.done", touch_rest);
			snprintf(msg, sizeof msg, "touched %zu pages\n", n);
			if (write_file_atomic(done, msg) != 0)
				fprintf(stderr, "ng-shm-workload: cannot write %s: %s\n", done, strerror(errno));
			if (verbose)
				print_numa_maps_line(p);
		}
	}

out:
	for (int i = 0; i < nchildren; i++)
		kill(children[i], SIGTERM);
	for (int i = 0; i < nchildren; i++)
		waitpid(children[i], NULL, 0);
	if (shmid >= 0) {
		if (p)
			shmdt(p);
		if (!keep)
			shmctl(shmid, IPC_RMID, NULL);
	} else if (p && p != MAP_FAILED) {
		munmap(p, bytes);
	}
	if (fd >= 0) {
		close(fd);
		if (!keep)
			unlink(path);
	}
	return rc;
}
