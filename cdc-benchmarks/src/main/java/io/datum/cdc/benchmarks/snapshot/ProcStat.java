package io.datum.cdc.benchmarks.snapshot;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** CPU times of Linux processes from {@code /proc/<pid>/stat}. */
final class ProcStat {
  /** USER_HZ on Linux: the unit of /proc/PID/stat's CPU times. */
  static final double CLK_TCK = 100;

  final long pid;
  final long ppid;

  /** utime + stime, in ticks. */
  final long self;

  /** cutime + cstime: the children this process waited for, in ticks. */
  final long children;

  private ProcStat(long pid, long ppid, long self, long children) {
    this.pid = pid;
    this.ppid = ppid;
    this.self = self;
    this.children = children;
  }

  /** The stat of a process, or null if it is gone. */
  static ProcStat of(long pid) {
    try {
      return parse(pid, Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** Parses a {@code /proc/<pid>/stat} line (as printed by {@code cat /proc/$$/stat}). */
  static ProcStat parse(long pid, String stat) {
    // fields after "(comm) ": state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17)
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
    return new ProcStat(
        pid,
        Long.parseLong(f[1]),
        Long.parseLong(f[11]) + Long.parseLong(f[12]),
        Long.parseLong(f[13]) + Long.parseLong(f[14]));
  }
}
