package renderproc

import (
	"errors"
	"fmt"
	"os"
	"time"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/sys/unix"
)

// Restrict installs the renderer's system-call filter (seccomp) on
// every thread of the process, and on every thread started later: it
// is the last thing a renderer does before it says hello. What a
// render needs (reading and writing its pipes, memory, threads, time,
// signals to itself) is allowed; opening, inspecting or listing files
// fails with EPERM (a Go library that looks for a file, as the time
// package looks for a zone, gets an error, not a crash); anything
// else (a socket, exec, fork, ptrace, a signal to another process,
// mapping executable memory, a namespace, the i386 calls) kills the
// process at once (SIGSYS), which its caller reports as the renderer's
// failure, not the chart's; the x32 calls fail with ENOSYS.
//
// It needs a kernel with seccomp filters (Linux 3.5, built with
// CONFIG_SECCOMP_FILTER) synchronised over threads (3.17); one that
// kills a whole process (4.14) is used when there is one (killAction).
// A kernel without filters is not a place to render a hostile chart:
// Restrict then fails, and so does the renderer's start, naming why.
func Restrict() error {
	// What is read from files once is read now: the local time zone
	// (Helm's date functions use it); other zones come from the
	// renderer's own copy of the zone database (time/tzdata).
	_ = time.Local.String()
	if !seccomp.Supported() {
		return errors.New("installing its system-call filter: this kernel has no seccomp filters (Linux 3.5 or later built with CONFIG_SECCOMP_FILTER is needed): refusing to render charts unfiltered")
	}
	p, err := policy(os.Getpid(), killAction())
	if err != nil {
		return fmt.Errorf("building its system-call filter: %w", err)
	}
	err = seccomp.LoadFilter(seccomp.Filter{NoNewPrivs: true, Flag: seccomp.FilterFlagTSync, Policy: p})
	if err != nil {
		return fmt.Errorf("installing its system-call filter (seccomp, every thread: Linux 3.17 or later): %w", err)
	}
	return nil
}

// killAction is how a forbidden call ends the renderer: the kernel kills
// the whole process (SECCOMP_RET_KILL_PROCESS, Linux 4.14); an older
// kernel would kill the calling thread alone, and the process, its other
// threads waiting, would end only at the render's timeout, blamed on
// the chart: there the call raises SIGSYS instead, of which the Go
// runtime dies at once ("SIGSYS: bad system call", which its caller
// takes for the renderer's failure).
func killAction() seccomp.Action {
	action := uint32(seccomp.ActionKillProcess)
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action))); errno != 0 {
		return seccomp.ActionTrap
	}
	return seccomp.ActionKillProcess
}

// allowed are the system calls a renderer makes once it serves: the Go
// runtime's (memory, threads, scheduling, signals, time, its poller),
// its pipes' reads and writes, and queries of its own descriptors and
// limits. Threads, signals and executable memory are allowed under
// conditions (policy).
var allowed = []string{
	// Its pipes and descriptors.
	"read", "write", "readv", "writev", "pread64", "pwrite64", "close", "fstat", "lseek", "fcntl", "dup", "dup3",
	// Memory (mmap: see policy).
	"munmap", "madvise", "mremap", "brk", "mincore",
	// Threads and scheduling.
	"futex", "sched_yield", "sched_getaffinity", "set_robust_list", "rseq", "exit", "exit_group",
	// Signals to itself (tgkill and kill: see policy).
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack",
	// The runtime's poller.
	"epoll_create1", "epoll_ctl", "epoll_pwait", "epoll_pwait2", "epoll_wait", "eventfd2", "pipe2",
	// Time and sleep.
	"clock_gettime", "clock_getres", "gettimeofday", "time", "nanosleep", "clock_nanosleep",
	// Who and where it is; its limits (it can only lower them).
	"getpid", "gettid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getgroups", "getrlimit", "prlimit64",
	"getrandom",
}

// denied are the system calls a library may make looking for a file or
// the system's name: they fail with EPERM and the renderer goes on.
var denied = []string{
	"open", "openat", "openat2", "creat", "stat", "lstat", "newfstatat", "statx", "access", "faccessat", "faccessat2",
	"readlink", "readlinkat", "getcwd", "getdents64", "statfs", "fstatfs", "uname", "sysinfo", "ioctl",
}

// namespaces are the clone flags that would make something other than
// a thread of this process.
const namespaces = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP | unix.CLONE_PTRACE | unix.CLONE_UNTRACED

// policy is the filter of the renderer process pid: allowed, denied,
// and under conditions: clone only of a thread (CLONE_THREAD, no
// namespace, no tracing), signals (tgkill, kill) only to itself, mmap
// only of memory that cannot be executed; everything else kills the
// process.
func policy(pid int, kill seccomp.Action) (seccomp.Policy, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return seccomp.Policy{}, err
	}
	// Some calls exist on some architectures only (arm64 has openat,
	// not open): each list keeps those of this one.
	known := func(names []string) []string {
		var out []string
		for _, n := range names {
			if _, ok := info.SyscallNames[n]; ok {
				out = append(out, n)
			}
		}
		return out
	}
	self := seccomp.Condition{Argument: 0, Operation: seccomp.Equal, Value: uint64(pid)}
	return seccomp.Policy{
		DefaultAction: kill,
		Syscalls: []seccomp.SyscallGroup{
			{
				Action: seccomp.ActionAllow,
				Names:  known(allowed),
				NamesWithCondtions: []seccomp.NameWithConditions{
					{Name: "clone", Conditions: seccomp.ArgumentConditions{
						{Argument: 0, Operation: seccomp.BitsSet, Value: unix.CLONE_THREAD},
						{Argument: 0, Operation: seccomp.BitsNotSet, Value: namespaces},
					}},
					{Name: "tgkill", Conditions: seccomp.ArgumentConditions{self}},
					{Name: "kill", Conditions: seccomp.ArgumentConditions{self}},
					{Name: "mmap", Conditions: seccomp.ArgumentConditions{{Argument: 2, Operation: seccomp.BitsNotSet, Value: unix.PROT_EXEC}}},
				},
			},
			{Action: seccomp.ActionErrno, Names: known(denied)},
		},
	}, nil
}
