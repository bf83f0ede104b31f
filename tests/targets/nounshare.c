/*
 * nounshare - run a command where unshare() fails with EPERM, as under a
 * seccomp filter like a container's default one. A collector under it
 * cannot give its files a descriptor table of their own (the keeper,
 * src/collector/fdkeep.h) and keeps them in the program's table.
 *
 *   nounshare COMMAND [ARGS...]
 *
 * The filter is inherited by every process the command starts. Exits 125
 * when it cannot be installed (or unshare() still works), 127 when
 * COMMAND cannot be run.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define FILTER_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FILTER_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define FILTER_ARCH AUDIT_ARCH_I386
#else
#error "nounshare: no seccomp architecture for this machine"
#endif

int main(int argc, char **argv)
{
	struct sock_filter filter[] = {
	    /* another architecture's system calls: allowed */
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FILTER_ARCH, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unshare, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(filter) / sizeof(filter[0]), filter};

	if (argc < 2) {
		fprintf(stderr, "usage: nounshare COMMAND [ARGS...]\n");
		return 125;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("nounshare: seccomp");
		return 125;
	}
	if (!syscall(SYS_unshare, CLONE_FILES) || errno != EPERM) {
		fprintf(stderr, "nounshare: unshare() still works\n");
		return 125;
	}
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
