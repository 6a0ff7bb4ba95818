/* ng-shm-check -- verify the pattern ng-shm-workload wrote into a SysV
 * segment, through a read-only attach (the e2e rebalance case checks that
 * moving pages changed no byte).
 *
 *   ng-shm-check SHMID PAGE_KIB
 *
 * ng-shm-workload's first touch writes p[off] = (char)(off / step) at the
 * start of every page (step = the page size) and leaves the rest zero; this
 * checks both, over the whole segment. Only run it on a segment whose every
 * page is resident (the workload touched them all): reading a hole would
 * fault a page in. Prints "ok bytes=B pages=N" and exits 0, or names the
 * first differing offset and exits 1; 2 on a usage or system error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>

int main(int argc, char **argv)
{
	struct shmid_ds ds;
	char *end;

	if (argc != 3) {
		fputs("usage: ng-shm-check SHMID PAGE_KIB\n", stderr);
		return 2;
	}
	long shmid = strtol(argv[1], &end, 10);
	unsigned long page_kib = strtoul(argv[2], NULL, 10);
	if (*end || shmid < 0 || page_kib == 0) {
		fputs("ng-shm-check: bad SHMID or PAGE_KIB\n", stderr);
		return 2;
	}
	if (shmctl((int)shmid, IPC_STAT, &ds) < 0) {
		fprintf(stderr, "ng-shm-check: shmctl %ld: %s\n", shmid, strerror(errno));
		return 2;
	}
	const unsigned char *p = shmat((int)shmid, NULL, SHM_RDONLY);
	if (p == (const void *)-1) {
		fprintf(stderr, "ng-shm-check: shmat %ld: %s\n", shmid, strerror(errno));
		return 2;
	}
	size_t bytes = ds.shm_segsz, step = page_kib << 10, pages = 0;
	int rc = 0;
	for (size_t off = 0; off < bytes && rc == 0; off += step, pages++) {
		size_t n = bytes - off < step ? bytes - off : step;
		if (p[off] != (unsigned char)(char)(off / step)) {
			printf("mismatch at offset %zu: 0x%02x, expected 0x%02x\n", off, p[off],
			       (unsigned char)(char)(off / step));
			rc = 1;
		}
		for (size_t i = 1; i < n && rc == 0; i++)
			if (p[off + i]) {
				printf("mismatch at offset %zu: 0x%02x, expected 0\n", off + i, p[off + i]);
				rc = 1;
			}
	}
	if (rc == 0)
		printf("ok bytes=%zu pages=%zu\n", bytes, pages);
	shmdt(p);
	return rc;
}
