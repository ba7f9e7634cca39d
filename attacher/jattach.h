/* jattach.h - HotSpot's dynamic attach protocol (what `jcmd` does), used by
 * `objscope attach` to have a running JVM write its perf map
 * (`Compiler.perfmap` -> /tmp/perf-<PID>.map in the JVM's own /tmp).
 *
 * Steps: if the JVM's attach socket /tmp/.java_pid<NSPID> does not exist
 * yet, the trigger file .attach_pid<NSPID> is created in the JVM's working
 * directory (else its /tmp), owned by the JVM's user, and SIGQUIT is sent:
 * the JVM's signal dispatcher sees the file and starts the "Attach Listener"
 * thread instead of printing a thread dump. Without the trigger file in
 * place SIGQUIT is never sent (it would print a thread dump on the
 * target's stdout). Paths go through /proc/PID/root and /proc/PID/cwd and
 * use the PID the JVM sees in its own namespace (the last NSpid), so a JVM
 * in a container is reached from the host or from a sidecar.
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
#include <sys/types.h>

/* The PID pid has in its own PID namespace (itself outside containers),
 * or -errno. */
pid_t os_jattach_ns_pid(pid_t pid);

/* Runs one jcmd command (e.g. "Compiler.perfmap") in JVM pid; its status
 * and output are put into out (NUL-terminated, cut to len). timeout_ms
 * bounds the whole exchange. -ECONNREFUSED / -ETIMEDOUT when the JVM did
 * not start its listener, -EPROTO when the JVM answered with an error
 * (the answer is in out). */
int os_jattach_jcmd(pid_t pid, const char *command, unsigned timeout_ms, char *out, size_t len,
		    char *err, size_t errlen);

/* Whether the perf map at path is process pid's own from before a request
 * (the user's jcmd Compiler.perfmap): not when it is missing, nor when it
 * is older than the process: a stale map of an earlier process with this
 * pid, which the JVM overwrites and objscope then removes like a map
 * written only for it. */
int os_jattach_map_predates(pid_t pid, const char *path);

/* Asks JVM pid for its perf map; on success path (len bytes) names the
 * file as seen from here (/proc/PID/root/tmp/perf-NSPID.map) and *existed
 * says whether the process's own map was there before
 * (os_jattach_map_predates; a file made for us is to be removed once
 * read). */
int os_jattach_perf_map(pid_t pid, unsigned timeout_ms, char *path, size_t len, int *existed,
			char *err, size_t errlen);

#endif
