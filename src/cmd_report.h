/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef WPROF_CMD_REPORT_H
#define WPROF_CMD_REPORT_H

/* wprof report [OPTIONS] FILE.wprof: the exit status. */
int cmd_report(int argc, char **argv);

#endif /* WPROF_CMD_REPORT_H */
