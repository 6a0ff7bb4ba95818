/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The namespaces a database lives in (docs/ARCHITECTURE.md, "Namespaces"):
 * numaguard's own and each process's (ns-collect.c), numaguard's own
 * credentials and why a process's maps were refused (ns-creds.c), the
 * containers the processes run in (ns-container.c, ns-names.c), and reading
 * through them: a namespace's link, the System V table an IPC namespace
 * shows only to its members, a runtime's file kept only in part
 * (ns-read.c). Not installed; what only namespaces/ shares is in
 * ns-internal.h.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ng-path.h"
#include "reader.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* ns-collect.c: numaguard's own namespaces into c->s, read before
 * anything is matched against them. */
void ng_collect_own_ns(struct collector *c);
/* ns-creds.c: numaguard's own credentials into c->s->self (live host),
 * and for a process whose maps were refused the facts that say why
 * (ng_proc.userns_other, lsm_label). */
void ng_collect_own_creds(struct collector *c);
void ng_collect_refusal(struct collector *c, struct ng_proc *pr);
/* Reads pr's IPC and mount namespaces (numaguard's where unreadable). */
void ng_collect_proc_ns(struct collector *c, struct ng_proc *pr);
/* ns-names.c: the containers of the processes in namespaces of their
 * own, named by their runtimes' files, into c->s->containers. */
int ng_collect_containers(struct collector *c);

/* ---- reading through a namespace (ns-read.c) ---- */

/*
 * The System V shared memory table of IPC namespace ns (the inode of
 * /proc/pid/ns/ipc), which /proc/sysvipc/shm shows only to a reader inside
 * it: live, read by a short-lived thread that joins the namespace
 * (setns(2), CAP_SYS_ADMIN), after checking that pid is still in ns
 * (-ESTALE otherwise); in a tree, and for the recorder, the file
 * NG_PATH_IPC_NS_DIR/<ns>/sysvipc/shm. 0 or -errno (-EPERM: not allowed).
 */
int ng_path_read_ipc_ns(const struct ng_path *p, pid_t pid, uint64_t ns, char **ret_buf, size_t *ret_len);
/* How many reader threads ng_path_read_ipc_ns() has started in this
 * process so far: each took a pid from the kernel, which the picture's
 * "nothing started since the listing" witness (picture.c) counts out. */
uint64_t ng_ns_readers_started(void);
/* A file read live without telling the recorder, for the caller to record
 * only what it keeps of it (a runtime's container file holds its
 * environment); in a tree, the file as recorded. 0 or -errno. */
int ng_path_read_unrecorded(const struct ng_path *p, char **ret_buf, size_t *ret_len, const char *rel);

#pragma GCC visibility pop
