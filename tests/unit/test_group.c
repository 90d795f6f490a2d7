// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the grouping of threads' stacks (src/group.c): numbered
 * names made one pool, the name frame found after a tag at the root, at
 * the leaf's other end, or first in untagged text, and left out for none.
 */
#include <string.h>

#include "group.h"
#include "unit.h"

static const char *pool(const char *name)
{
	static char buf[64];

	group__pool_name(buf, sizeof(buf), name, strlen(name));
	return buf;
}

static const char *line(const char *l, enum group_by g, const char *pname)
{
	static char buf[256];
	size_t n = group__line(buf, sizeof(buf), l, strlen(l), g, pname);

	CHECK_EQ_U64(n, strlen(buf), "the length said is the length written (%s)", l);
	return buf;
}

static void test_pool(void)
{
	CHECK_STREQ(pool("worker-12"), "worker-*", "a number at the end");
	CHECK_STREQ(pool("pool-3-thread-17"), "pool-*-thread-*", "every run of digits");
	CHECK_STREQ(pool("42"), "*", "digits alone");
	CHECK_STREQ(pool("main"), "main", "no digits: as it is");
	CHECK_STREQ(pool(""), "", "empty");
}

static void test_line(void)
{
	CHECK_STREQ(line("on-cpu;worker-3;main;f", GROUP_THREAD, NULL), "on-cpu;worker-3;main;f",
		    "thread: as it is");
	CHECK_STREQ(line("on-cpu;worker-3;main;f", GROUP_POOL, NULL), "on-cpu;worker-*;main;f",
		    "pool: the name after the tag");
	CHECK_STREQ(line("on-cpu;worker-3;main;f", GROUP_NONE, NULL), "on-cpu;main;f",
		    "none: the name left out");
	CHECK_STREQ(line("on-cpu;worker-3;main;f", GROUP_PROCESS, "svc"), "on-cpu;svc;main;f",
		    "process: its name in place");
	CHECK_STREQ(line("on-cpu;worker-3;main;f", GROUP_PROCESS, NULL),
		    "on-cpu;worker-3;main;f", "process, not known: the thread's kept");
	CHECK_STREQ(line("worker-3;main;f;off-cpu:sleep", GROUP_NONE, NULL),
		    "main;f;off-cpu:sleep", "--tag-leaf: the name is first");
	CHECK_STREQ(line("java-7;main;f", GROUP_POOL, NULL), "java-*;main;f",
		    "untagged (another tool's): the first frame");
	CHECK_STREQ(line("off-cpu:sleep;worker-3", GROUP_NONE, NULL), "off-cpu:sleep;worker-3",
		    "a tag and a name alone: the name kept, not an empty stack");
	CHECK_STREQ(line("single", GROUP_NONE, NULL), "single", "one frame: kept");
}

static void test_parse(void)
{
	enum group_by g = GROUP_THREAD;

	CHECK(!group__parse("none", &g) && g == GROUP_NONE, "none");
	CHECK(!group__parse("pool", &g) && g == GROUP_POOL, "pool");
	CHECK(!group__parse("process", &g) && g == GROUP_PROCESS, "process");
	CHECK(group__parse("threads", &g) < 0, "a name not known");
}

int main(void)
{
	test_pool();
	test_line();
	test_parse();
	return unit_done();
}
