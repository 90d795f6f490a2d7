/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The pprof format: a gzip-compressed profile.proto message
 * (github.com/google/pprof/blob/main/proto/profile.proto), as `go tool
 * pprof`, Pyroscope, Parca, Grafana and speedscope read it.
 *
 * Three sample types, all in nanoseconds: wall (the default), oncpu and
 * offcpu; a sample is one line of the recording, wall = oncpu + offcpu.
 * Labels: state (on-cpu, sleep, disk, runqueue, or off-cpu with
 * --no-states), thread (its name), process (its process's name), pid and
 * tid (numbers). So `go tool pprof -tagfocus=state=runqueue` shows the
 * waits for a CPU, `-sample_index=oncpu` the CPU profile, and
 * `-tagroot=state,thread` the shape of wprof's folded flame graph.
 *
 * Stacks carry names only: by the time a line is written its frames are
 * symbolized, and their addresses are gone. So there is one location per
 * frame name (or per function and the calls inlined into it, with
 * --inline: a frame ending in _[i] is a line of its caller's location),
 * one mapping (the program, marked symbolized) and no addresses; pprof needs
 * none to show names.
 */
#ifndef WPROF_PPROF_H
#define WPROF_PPROF_H

#include <stdio.h>

#include "recording.h"

/*
 * Write the recording @r: its lines (with ids, for the labels), the names
 * of its threads' processes, its window. 0, or -errno (-EIO when writing
 * failed).
 */
int pprof__write_recording(const struct recording *r, FILE *f);

#endif /* WPROF_PPROF_H */
