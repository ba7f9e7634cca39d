/* jattach.h - HotSpot's dynamic attach protocol (what `jcmd` does), used by
 * `objscope attach` to have a running JVM write its perf map
 * (`Compiler.perfmap` -> /tmp/perf-<PID>.map in the JVM's own /tmp).
 *
 * Steps: if the JVM's attach socket /tmp/.java_pid<NSPID> does not exist
 * yet, the trigger file .attach_pid<NSPID> is created in the JVM's working
 * directory (else its /tmp) with the JVM's user's file-system identity
 * (setfsuid/setfsgid, O_EXCL | O_NOFOLLOW), and SIGQUIT is sent:
 * the JVM's signal dispatcher sees the file and starts the "Attach Listener"
 * thread instead of printing a thread dump. Without the trigger file in
 * place SIGQUIT is never sent (it would print a thread dump on the
 * target's stdout). The JVM's /tmp is resolved inside its root
 * (/proc/PID/root, openat2 RESOLVE_IN_ROOT: Linux >= 5.6, else refused),
 * its working directory is /proc/PID/cwd, and names are those of the PID
 * the JVM sees in its own namespace (the last NSpid), so a JVM in a
 * container is reached from the host or from a sidecar. Everything the
 * JVM's user controls is untrusted: no name there is followed; the socket
 * must be a socket of the JVM's uid (or root) served by the JVM itself
 * (SO_PEERCRED), the perf map a regular file of its uid (or root).
 * The request: "1\0" "jcmd\0" "<command>\0" "\0" "\0"; the answer: a
 * status line ("0" = success) and the command's output, until EOF.
 *
 * Note: the JVM keeps the Attach Listener thread and its listening socket
 * (one fd) once started, as after any jcmd/jstack.
 *
 * Return convention: 0 / -errno; err receives one line.
 */
#ifndef OBJSCOPE_JATTACH_H
#define OBJSCOPE_JATTACH_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The PID pid has in its own PID namespace (itself outside containers),
 * or -errno. */
pid_t os_jattach_ns_pid(pid_t pid);

/* Checks the JVM's answer to a command (buf, n bytes, not necessarily
 * NUL-terminated; anything the JVM or whoever serves the socket sent):
 * 0 when its status line says success ("0"), else -EPROTO with err
 * saying so, the answer's start made one printable line. */
int os_jattach_parse_reply(const char *buf, size_t n, const char *command, char *err,
			   size_t errlen);

/* Runs one jcmd command (e.g. "Compiler.perfmap") in JVM pid; its status
 * and output are put into out (NUL-terminated, cut to len). timeout_ms
 * bounds the whole exchange. -ECONNREFUSED / -ETIMEDOUT when the JVM did
 * not start its listener, -EPROTO when the JVM answered with an error
 * (the answer is in out). */
int os_jattach_jcmd(pid_t pid, const char *command, unsigned timeout_ms, char *out, size_t len,
		    char *err, size_t errlen);

/* Whether the perf map `name` in directory dirfd (the JVM's /tmp) is
 * process pid's own from before a request (the user's jcmd
 * Compiler.perfmap): not when it is missing, nor when it is a regular file
 * of the JVM's uid older than the process: a stale map of an earlier
 * process with this pid, which the JVM overwrites and objscope then removes
 * like a map written only for it. Anything else there (a link, a FIFO,
 * another user's file) counts as not ours: kept. The name is never
 * followed. */
int os_jattach_map_predates(pid_t pid, uid_t uid, int dirfd, const char *name);

/* Whether the perf map `name` of directory dirfd may be used: a regular
 * file (not followed if a link) owned by uid or root; *st gets its stat.
 * 0, or -ENOENT / -ELOOP / -EFTYPE_OS / -EPERM with err set. */
int os_jattach_map_check(int dirfd, const char *name, uid_t uid, struct stat *st, char *err,
			 size_t errlen);

/* os_jattach_map_check on JVM pid's /tmp/perf-NSPID.map, that /tmp being
 * resolved inside the JVM's root. */
int os_jattach_map_stat(pid_t pid, struct stat *st, char *err, size_t errlen);

/* Asks JVM pid for its perf map; on success path (len bytes) names the
 * file as seen from here (/proc/PID/root/tmp/perf-NSPID.map), checked to be
 * a regular file of the JVM's uid (os_jattach_map_check), and *existed
 * says whether the process's own map was there before
 * (os_jattach_map_predates; a file made for us is to be removed once
 * read). */
int os_jattach_perf_map(pid_t pid, unsigned timeout_ms, char *path, size_t len, int *existed,
			char *err, size_t errlen);

/* The pieces, for tests. The attach trigger `name` created in dirfd with
 * the file-system identity uid/gid (O_CREAT | O_EXCL | O_NOFOLLOW, 0600,
 * no chown): 0 and *created; 1 when a regular file of uid (or root) is
 * there already (a jcmd's: used, not removed); -errno. */
int os_jattach_trigger(int dirfd, uid_t uid, gid_t gid, const char *name, struct stat *created);
/* Removes it as uid/gid, only if it is still the inode created. */
int os_jattach_untrigger(int dirfd, uid_t uid, gid_t gid, const char *name,
			 const struct stat *created);
/* Connects to the attach socket `name` of dirfd (see jattach.c): the fd;
 * -ENOENT / -ECONNREFUSED: none listening; -EPERM: refused, err says why
 * (not a socket, owned by another uid than uid or root, served by another
 * process than pid; the messages call it /tmp/NAME, where the JVM has it). */
int os_jattach_connect_at(int dirfd, const char *name, pid_t pid, uid_t uid, char *err,
			  size_t errlen);
/* SO_PEERCRED of a connected socket: its server must be process pid (or,
 * when its pid is not visible from here, of uid or root). 0 / -EPERM. */
int os_jattach_check_peer(int fd, pid_t pid, uid_t uid, const char *name, char *err,
			  size_t errlen);

#endif
