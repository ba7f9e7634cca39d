/* test_log.c - common/log.c: messages cannot carry control characters or
 * escape sequences to the terminal (a JVM's attach reply or a
 * dlerror text printed raw to root's terminal); a live status line is taken
 * off before every message. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <string.h>

#include "common/log.h"

static const char *esc(const char *in)
{
	static char out[512];

	os_log_escape(in, out, sizeof(out));
	return out;
}

Test(log, controls_escaped_text_kept)
{
	cr_expect_str_eq(esc("plain text: 42%"), "plain text: 42%");
	cr_expect_str_eq(esc("\x1b]0;owned\x07\x1b[2J"), "\\x1b]0;owned\\x07\\x1b[2J");
	cr_expect_str_eq(esc("line\nfake objscope: ok\r"), "line\\x0afake objscope: ok\\x0d");
	cr_expect_str_eq(esc("tab\there\x7f"), "tab\\x09here\\x7f");
	/* UTF-8 text stays readable */
	cr_expect_str_eq(esc("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x99\x82"),
			 "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x99\x82");
	/* C1 controls (U+009B is a CSI), lone and cut sequences, overlong
	 * encodings, surrogates, beyond U+10FFFF */
	cr_expect_str_eq(esc("\xc2\x9b" "31m"), "\\xc2\\x9b31m");
	cr_expect_str_eq(esc("\x9b" "31m"), "\\x9b31m");
	cr_expect_str_eq(esc("\xc3"), "\\xc3");
	cr_expect_str_eq(esc("\xe6\x97"), "\\xe6\\x97");
	cr_expect_str_eq(esc("\xc0\x9b"), "\\xc0\\x9b");
	cr_expect_str_eq(esc("\xe0\x80\x9b"), "\\xe0\\x80\\x9b");
	cr_expect_str_eq(esc("\xed\xa0\x80"), "\\xed\\xa0\\x80");
	cr_expect_str_eq(esc("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
}

Test(log, output_bounded_and_cut_whole)
{
	char out[8];

	cr_expect_eq(os_log_escape("\x1b\x1b", out, sizeof(out)), 4);
	cr_expect_str_eq(out, "\\x1b", "an escape that does not fit is left out whole");
	cr_expect_eq(os_log_escape("abcdef\xc3\xa9", out, sizeof(out)), 6);
	cr_expect_str_eq(out, "abcdef");
	cr_expect_eq(os_log_escape("x", out, 1), 0);
	cr_expect_str_eq(out, "");
}

static void redirect(void)
{
	cr_redirect_stderr();
}

Test(log, every_level_escapes, .init = redirect)
{
	os_verbose = 2;
	os_err("jvm said: %s", "\x1b[31mred\x1b[0m");
	os_warn("dlerror: %s", "x\ry");
	os_debug("thread %s", "\x07");
	os_trace("cmdline %s", "a\x1b" "b");
	fflush(stderr);
	cr_assert_stderr_eq_str("objscope: jvm said: \\x1b[31mred\\x1b[0m\n"
				"objscope: warning: dlerror: x\\x0dy\n"
				"objscope: thread \\x07\n"
				"objscope: cmdline a\\x1bb\n");
}

static void fake_clear(void)
{
	fputs("<clear>", stderr);
}

/* A live status line registered with os_log_set_progress_clear is taken off
 * before each message printed, so the message starts a line of its own (issue
 * 24); messages not printed (os_debug without -v) leave it, and after
 * unregistering nothing is called. */
Test(log, progress_cleared_before_messages, .init = redirect)
{
	os_verbose = 0;
	os_log_set_progress_clear(fake_clear);
	os_warn("first");
	os_debug("not printed");
	os_err("second");
	os_log_set_progress_clear(NULL);
	os_err("third");
	os_log_progress_clear();
	fflush(stderr);
	cr_assert_stderr_eq_str("<clear>objscope: warning: first\n"
				"<clear>objscope: second\n"
				"objscope: third\n");
}
