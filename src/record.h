/* SPDX-License-Identifier: GPL-2.0-only */
/* `wprof record` (record.c). */
#ifndef WPROF_RECORD_H
#define WPROF_RECORD_H

/* `wprof record`: returns the process exit code. */
int cmd_record(int argc, char **argv);

#endif /* WPROF_RECORD_H */
