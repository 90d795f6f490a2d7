/* SPDX-License-Identifier: GPL-2.0-only */
/* `wprof report FILE.wprof`: a saved recording written again, in any format. */
#ifndef WPROF_CMD_REPORT_H
#define WPROF_CMD_REPORT_H

/* wprof report [OPTIONS] FILE.wprof: the exit status. */
int cmd_report(int argc, char **argv);

#endif /* WPROF_CMD_REPORT_H */
