package io.datum.cdc.benchmarks.e2e;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** The {@code pg_recvlogical} consumers, and reading a process's CPU time from /proc. */
final class RecvLogical {

  /** USER_HZ on Linux: the unit of /proc/PID/stat's CPU times. */
  static final long CLK_TCK = 100;

  private RecvLogical() {}

  /** {@code pg_recvlogical --start} on the slot with pgoutput, writing to {@code file}. */
  private static List<String> command(
      HarnessOptions o, EmbeddedPostgresServer pg, String slot, String publication, String file) {
    return ConsumerCommands.pgRecvlogical(o.pgRecvlogical, pg, slot, publication, file);
  }

  /**
   * Consumer {@code pg_recvlogical_pipe}: pg_recvlogical with the same slot and publication, its
   * raw pgoutput going to a pipe this process reads and discards (so the first and last byte can be
   * timed); stops it once the stream has been idle for {@code --idle-seconds} after its first byte.
   */
  static void toPipe(
      HarnessOptions o,
      EmbeddedPostgresServer pg,
      Result r,
      long expected,
      String slot,
      String publication)
      throws Exception {
    List<String> cmd = command(o, pg, slot, publication, "-");
    long launched = System.nanoTime();
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    AtomicLong bytes = new AtomicLong();
    AtomicLong first = new AtomicLong();
    AtomicLong last = new AtomicLong();
    Thread reader =
        new Thread(
            () -> {
              byte[] buf = new byte[1 << 16];
              try (InputStream in = p.getInputStream()) {
                for (int n; (n = in.read(buf)) >= 0; ) {
                  long now = System.nanoTime();
                  if (bytes.getAndAdd(n) == 0) {
                    first.set(now);
                  }
                  last.set(now);
                }
              } catch (IOException e) {
                // the process ended
              }
            },
            "pg_recvlogical-reader");
    reader.start();
    long pid = p.pid();
    long deadline = launched + TimeUnit.SECONDS.toNanos(o.timeoutSeconds);
    long ticks = 0, hwmKb = 0;
    long idle = (long) (o.idleSeconds * 1e9);
    while (p.isAlive() && System.nanoTime() < deadline) {
      long[] st = procStat(pid);
      if (st != null) {
        ticks = st[0];
        hwmKb = st[1];
      }
      if (bytes.get() > 0 && System.nanoTime() - last.get() > idle) {
        break;
      }
      Thread.sleep(50);
    }
    long[] st = procStat(pid);
    if (st != null) {
      ticks = st[0];
      hwmKb = st[1];
    }
    p.destroy();
    p.waitFor(10, TimeUnit.SECONDS);
    reader.join(10_000);
    double seconds = (last.get() - first.get()) / 1e9;
    r.put("events", expected)
        .put("complete", "bytes=" + bytes.get())
        .put("seconds", seconds)
        .put("eventsPerSecond", expected / seconds)
        .put("launchToFirstSeconds", (first.get() - launched) / 1e9)
        .put("launchToLastSeconds", (last.get() - launched) / 1e9)
        .put("peakRssMB", hwmKb / 1024.0)
        .put("cpuSeconds", ticks / (double) CLK_TCK)
        .put("cpuStreamingSeconds", ticks / (double) CLK_TCK)
        .put("bytes", bytes.get());
  }

  /**
   * Runs pg_recvlogical as the issue asks: raw pgoutput to /dev/null, {@code --endpos} the WAL
   * position after the workload, so it exits once it has received everything. It cannot time its
   * first and last message, so the time is from its start to its exit; its CPU time is what its
   * parent shell reports for it ({@code cutime + cstime}) once it exited.
   */
  static void toDevNull(
      HarnessOptions o,
      EmbeddedPostgresServer pg,
      Result r,
      long expected,
      String slot,
      String publication,
      String endLsn)
      throws Exception {
    List<String> cmd =
        new ArrayList<>(List.of("/bin/sh", "-c", "\"$0\" \"$@\" && cat /proc/$$/stat"));
    cmd.addAll(command(o, pg, slot, publication, "/dev/null"));
    cmd.addAll(List.of("-E", endLsn));
    long launched = System.nanoTime();
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String out;
    try (InputStream in = p.getInputStream()) {
      out = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
    }
    long ended = System.nanoTime();
    if (!p.waitFor(o.timeoutSeconds, TimeUnit.SECONDS) || p.exitValue() != 0 || out.isEmpty()) {
      p.destroyForcibly();
      throw new IllegalStateException("pg_recvlogical failed (" + out + ")");
    }
    String[] f = out.substring(out.lastIndexOf(')') + 2).split(" ");
    long ticks = Long.parseLong(f[13]) + Long.parseLong(f[14]); // fields 16 and 17: cutime, cstime
    double seconds = (ended - launched) / 1e9;
    r.put("events", expected)
        .put("complete", "endpos " + endLsn)
        .put("seconds", seconds)
        .put("eventsPerSecond", expected / seconds)
        .put("launchToFirstSeconds", Double.NaN) // no output to time
        .put("launchToLastSeconds", seconds)
        .put("peakRssMB", Double.NaN)
        .put("cpuSeconds", ticks / (double) CLK_TCK)
        .put("cpuStreamingSeconds", ticks / (double) CLK_TCK);
  }

  /** utime+stime in clock ticks and VmHWM in kB of a process, or null if it is gone. */
  static long[] procStat(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]); // fields 14 and 15
      long hwm = 0;
      for (String l : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (l.startsWith("VmHWM:")) {
          hwm = Long.parseLong(l.replaceAll("[^0-9]", ""));
        }
      }
      return new long[] {ticks, hwm};
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }
}
