/* fuzz_jattach.c - libFuzzer target over the check of a JVM's attach reply
 * (runtimes/hotspot/jattach.c os_jattach_parse_reply): the answer comes from
 * whatever serves the JVM's attach socket, so its bytes are hostile input,
 * and a refusal puts part of them into a message on root's
 * terminal.
 *
 * Checked: success exactly when the status line is "0"; a refusal's message
 * is one line of printable ASCII (no control byte, no escape sequence), of
 * bounded length, naming the command. Built by `make fuzz` with
 * -DOS_FUZZ_ENTRY; build/test_fuzz_regress calls os_fuzz_jattach directly on
 * the findings tests/fuzz/crashes/jattach-* and the seeds
 * tests/fuzz/corpus_jattach/.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/hotspot/jattach.h"

int os_fuzz_jattach(const uint8_t *data, size_t size);

int os_fuzz_jattach(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	bool ok = size >= 1 && buf[0] == '0' && (size == 1 || buf[1] == '\n' || buf[1] == 0);
	char err[512];
	int rc;

	memset(err, 'x', sizeof(err));
	err[sizeof(err) - 1] = 0;
	rc = os_jattach_parse_reply(buf, size, "Compiler.perfmap", err, sizeof(err));
	if ((rc == 0) != ok || (rc != 0 && rc != -EPROTO))
		abort();
	if (rc == 0)
		return 0;
	if (strlen(err) > 300 || !strstr(err, "Compiler.perfmap"))
		abort();
	for (const unsigned char *p = (const unsigned char *)err; *p; p++)
		if (*p < 0x20 || *p >= 0x7f)
			abort(); /* a byte that could drive a terminal */
	return 0;
}

#ifdef OS_FUZZ_ENTRY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return os_fuzz_jattach(data, size);
}
#endif
