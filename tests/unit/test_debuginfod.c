// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of debug files from debuginfod: a stripped library whose debug
 * file is nowhere on disk (libwpfix-buildid.so) gets its names from a
 * debuginfod server when DEBUGINFOD_URLS names one, and no request goes
 * out when it is unset. The server is a child of the test on 127.0.0.1
 * that serves the fixture's debug file by build-id. libdw reads
 * DEBUGINFOD_URLS once per process, so each case runs in a child process.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "symbolize.h"
#include "unit.h"
#include "../fixtures/fixchild.h"

#define BUILD_ID "5770666978000000000000000000000000000003"

static char log_path[] = "/tmp/wprof-dbgd-log-XXXXXX";

/* Answer GET /buildid/BUILD_ID/debuginfo with @debug_file, anything else with 404. */
static void serve(int sock, const char *debug_file)
{
	for (;;) {
		char req[4096], head[256], path[512] = "";
		int c = accept(sock, NULL, NULL), fd, logfd;
		ssize_t n, len = 0;
		struct stat st;

		if (c < 0)
			continue;
		while (len < (ssize_t)sizeof(req) - 1 && (n = read(c, req + len, sizeof(req) - 1 - len)) > 0) {
			len += n;
			req[len] = '\0';
			if (strstr(req, "\r\n\r\n"))
				break;
		}
		req[len > 0 ? len : 0] = '\0';
		sscanf(req, "GET %511s", path);
		logfd = open(log_path, O_WRONLY | O_APPEND);
		if (logfd >= 0) {
			dprintf(logfd, "%s\n", path);
			close(logfd);
		}
		fd = strcmp(path, "/buildid/" BUILD_ID "/debuginfo") ? -1 : open(debug_file, O_RDONLY);
		if (fd >= 0 && !fstat(fd, &st)) {
			snprintf(head, sizeof(head),
				 "HTTP/1.1 200 OK\r\nContent-Length: %lld\r\nConnection: close\r\n\r\n",
				 (long long)st.st_size);
			if (write(c, head, strlen(head)) > 0)
				while ((n = read(fd, req, sizeof(req))) > 0 && write(c, req, n) == n)
					;
		} else {
			snprintf(head, sizeof(head), "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
						     "Connection: close\r\n\r\n");
			if (write(c, head, strlen(head)) < 0)
				break;
		}
		if (fd >= 0)
			close(fd);
		close(c);
	}
}

/* In a child process: name the static function of libwpfix-buildid.so; @want_named or not. */
static int symbolize_case(const char *urls, const char *cache, bool want_named)
{
	char exe[600], lib[600], buf[256];
	struct symbolizer *s;
	struct child c = {};
	int ret;

	if (urls)
		setenv("DEBUGINFOD_URLS", urls, 1);
	else
		unsetenv("DEBUGINFOD_URLS");
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	setenv("DEBUGINFOD_TIMEOUT", "10", 1);
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	snprintf(exe, sizeof(exe), "%s/wpfix", fixture_dir);
	snprintf(lib, sizeof(lib), "%s/libwpfix-buildid.so", fixture_dir);
	s = symbolizer__new();
	if (!CHECK(s && child_start(&c, (char *[]){ exe, lib, lib, lib, lib, NULL }) == 0,
		   "fixture runs"))
		goto out;
	CHECK_EQ_S64(symbolizer__add_pid(s, c.pid), 0, "add_pid");
	ret = symbolizer__user(s, c.pid, child_addr(&c, "buildid_fix_lib_static") + 1, buf,
			       sizeof(buf));
	if (want_named)
		CHECK(ret == 0 && !strcmp(buf, "fix_lib_static"),
		      "DEBUGINFOD_URLS set: named from the server's debug file (got \"%s\")", buf);
	else
		CHECK(ret == 1 && strstr(buf, "libwpfix-buildid.so+0x") == buf,
		      "DEBUGINFOD_URLS unset: no debug file, a fallback (got \"%s\")", buf);
out:
	child_stop(&c);
	symbolizer__free(s);
	return unit_done();
}

static int run_case(const char *urls, const char *cache, bool want_named)
{
	int status = -1;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid)
		_exit(symbolize_case(urls, cache, want_named));
	if (pid > 0)
		waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* How many requests the server logged, and whether one asked for the build-id. */
static int requests(bool *asked)
{
	char line[600];
	int n = 0;
	FILE *f = fopen(log_path, "r");

	*asked = false;
	while (f && fgets(line, sizeof(line), f)) {
		n++;
		*asked |= strstr(line, "/buildid/" BUILD_ID "/debuginfo") != NULL;
	}
	if (f)
		fclose(f);
	return n;
}

static void test_debuginfod(void)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	char cache[] = "/tmp/wprof-dbgd-cache-XXXXXX", debug[600], urls[64], cmd[128];
	socklen_t len = sizeof(addr);
	pid_t server = -1;
	bool asked;
	int sock, logfd;

	if (!dlopen("libdebuginfod.so.1", RTLD_LAZY)) {
		fprintf(stderr, "skip test_debuginfod: libdebuginfod.so.1 not installed "
				"(Debian: libdebuginfod1)\n");
		return;
	}
	snprintf(debug, sizeof(debug), "%s/debug/.build-id/%.2s/%s.debug", fixture_dir, BUILD_ID,
		 BUILD_ID + 2);
	logfd = mkstemp(log_path);
	if (!CHECK(logfd >= 0 && mkdtemp(cache) && access(debug, R_OK) == 0,
		   "log, cache directory, debug file %s", debug))
		return;
	close(logfd);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!CHECK(sock >= 0 && !bind(sock, (struct sockaddr *)&addr, sizeof(addr)) &&
			   !listen(sock, 8) && !getsockname(sock, (struct sockaddr *)&addr, &len),
		   "server listens on 127.0.0.1"))
		goto out;
	server = fork();
	if (!server) {
		serve(sock, debug);
		_exit(0);
	}
	close(sock);
	CHECK_EQ_S64(run_case(NULL, cache, false), 0, "case without DEBUGINFOD_URLS passed");
	CHECK_EQ_S64(requests(&asked), 0, "without DEBUGINFOD_URLS, no request");
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", ntohs(addr.sin_port));
	CHECK_EQ_S64(run_case(urls, cache, true), 0, "case with DEBUGINFOD_URLS=%s passed", urls);
	CHECK(requests(&asked) >= 1 && asked, "the server was asked for build-id %s", BUILD_ID);
out:
	if (server > 0) {
		kill(server, SIGKILL);
		waitpid(server, NULL, 0);
	}
	unlink(log_path);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cache);
	if (system(cmd))
		fprintf(stderr, "test_debuginfod: could not remove %s\n", cache);
}

int main(void)
{
	alarm(60);
	fix_init();
	test_debuginfod();
	return unit_done();
}
