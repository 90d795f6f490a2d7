/* SPDX-License-Identifier: GPL-2.0-only */
/* What every module uses: messages, clocks, small file reads, growing arrays. */
#ifndef WPROF_UTIL_H
#define WPROF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NSEC_PER_SEC 1000000000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_USEC 1000ULL

/* Every message the tool prints starts with "wprof: ". */
void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parse a positive decimal number of seconds ("30", "0.5") into ns. 0 or -EINVAL. */
int parse_duration_ns(const char *s, __u64 *ns);
/* Parse a time with an optional unit (ns, us, ms, s; none: us), >= 0. 0 or -EINVAL. */
int parse_time_ns(const char *s, __u64 *ns);
/* Parse a positive integer no larger than max. 0, -EINVAL or -ERANGE. */
int parse_positive(const char *s, __u64 max, __u64 *out);
/*
 * Parse a list of positive ids, appending them to *ids (realloc'd). Ids are
 * separated by a comma, blanks (space, tab, newline: what `pidof` and
 * `pgrep` print), or a comma with blanks around it: "1,2", "1 2", "1, 2".
 * Blanks at either end are ignored. An empty element is an error: "", "1,",
 * ",1", "1,,2", "1, ,2". 0, -EINVAL with the reason in @why, or -ENOMEM.
 */
int parse_id_list(const char *s, __u32 **ids, size_t *nr, char *why, size_t why_len);

/*
 * Split @total into @n integer parts proportional to @shares that sum to
 * exactly @total (largest remainder): part i is total * shares[i] / sum,
 * rounded down, and the units left over go one each to the parts with the
 * largest remainders, the first of equal ones first. All parts are 0 when
 * every share is 0. 0 or -ENOMEM.
 */
int apportion(__u64 total, const __u64 *shares, size_t n, __u64 *parts);

/* Nanoseconds to microseconds, to the nearest. */
static inline __u64 ns_to_us(__u64 ns)
{
	return (ns + 500) / 1000;
}

/*
 * Round @n times in ns to us so that they sum to exactly their sum rounded
 * (ns_to_us()): each is rounded down, and the us left over go one each to
 * the largest remainders, the first of equal ones first. Each result is
 * its time rounded down or up. 0 or -ENOMEM.
 */
int round_ns_to_us(const __u64 *ns, size_t n, __u64 *us);

__u64 now_ns(void); /* CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns() */

/*
 * Room for one more element in the array *@arr (a pointer to the array's
 * pointer) of @nr elements of @size bytes, *@cap of them allocated: its
 * capacity doubles when full, @first at first. 0, or -ENOMEM with the array
 * as it was.
 */
int array_reserve(void *arr, size_t *cap, size_t nr, size_t size, size_t first);

/* Read a small /proc file into buf (NUL-terminated). Bytes read or -errno. */
int read_small_file(const char *path, char *buf, size_t size);

#endif /* WPROF_UTIL_H */
