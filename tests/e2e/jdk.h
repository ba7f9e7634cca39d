/* jdk.h - the java of an installed JDK of a given major version, for the
 * Java end-to-end tests that run on more than one JDK (header only). */
#ifndef OBJSCOPE_TESTS_E2E_JDK_H
#define OBJSCOPE_TESTS_E2E_JDK_H

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The java of an installed JDK of major version `major` into buf: the one
 * $OBJSCOPE_JDK<major> names (a JDK's home), else the first JDK under
 * /usr/lib/jvm whose release file says JAVA_VERSION="<major>...". */
static inline bool e2e_find_jdk(int major, char *buf, size_t len)
{
	char env[32], want[32], path[600], line[256];
	const char *home;
	struct dirent *d;
	DIR *dir;

	snprintf(env, sizeof(env), "OBJSCOPE_JDK%d", major);
	home = getenv(env);
	if (home && home[0]) {
		snprintf(buf, len, "%s/bin/java", home);
		return access(buf, X_OK) == 0;
	}
	snprintf(want, sizeof(want), "JAVA_VERSION=\"%d", major);
	dir = opendir("/usr/lib/jvm");
	if (!dir)
		return false;
	while ((d = readdir(dir))) {
		FILE *f;
		bool match = false;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/usr/lib/jvm/%s/release", d->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, want, strlen(want)) &&
			    (line[strlen(want)] == '"' || line[strlen(want)] == '.'))
				match = true;
		if (f)
			fclose(f);
		snprintf(buf, len, "/usr/lib/jvm/%s/bin/java", d->d_name);
		if (match && access(buf, X_OK) == 0) {
			closedir(dir);
			return true;
		}
	}
	closedir(dir);
	return false;
}

#endif
