package io.datum.cdc.benchmarks.e2e;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Consumer {@code pgcdc}: {@code pgcdc stream} (cdc-cli's jar) in its default mode on the existing
 * slot with a new {@code file:} store, its JSON lines going to a pipe this process reads and
 * discards. The first and last line are timed as the JVM consumers' first and last event, and its
 * CPU is read from {@code /proc} at those two moments (so the streaming CPU excludes its start-up,
 * as for the JVM consumers); it is stopped (SIGTERM) once the expected lines came.
 */
final class PgcdcStream {
  private PgcdcStream() {}

  static void run(
      HarnessOptions o,
      EmbeddedPostgresServer pg,
      Result r,
      long expected,
      String slot,
      String publication)
      throws Exception {
    Path store = Files.createTempDirectory("e2e-pgcdc-store");
    List<String> cmd =
        ConsumerCommands.pgcdcStream(o.childJvmArgs, o.pgcdcJar, pg, slot, publication, store);
    long launched = System.nanoTime();
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    long pid = p.pid();
    long lines = 0, first = 0, last = 0;
    long[] atFirst = null, atLast = null;
    byte[] buf = new byte[1 << 16];
    try (InputStream in = p.getInputStream()) {
      for (int n; lines < expected && (n = in.read(buf)) >= 0; ) {
        long now = System.nanoTime();
        if (first == 0) {
          first = now;
          atFirst = RecvLogical.procStat(pid);
        }
        for (int i = 0; i < n; i++) {
          if (buf[i] == '\n') {
            lines++;
          }
        }
        if (lines >= expected) {
          last = now;
          atLast = RecvLogical.procStat(pid);
        }
      }
    } finally {
      p.destroy(); // SIGTERM: pgcdc stores its acknowledgements and exits
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
      try (var files = Files.walk(store)) {
        for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(f);
        }
      }
    }
    if (atFirst == null || atLast == null) {
      throw new IllegalStateException(
          "pgcdc stream printed " + lines + " of " + expected + " lines");
    }
    double seconds = (last - first) / 1e9;
    r.put("events", lines)
        .put("complete", lines == expected)
        .put("seconds", seconds)
        .put("eventsPerSecond", lines / seconds)
        .put("launchToFirstSeconds", (first - launched) / 1e9)
        .put("launchToLastSeconds", (last - launched) / 1e9)
        .put("peakRssMB", atLast[1] / 1024.0)
        .put("cpuSeconds", atLast[0] / (double) RecvLogical.CLK_TCK)
        .put("cpuStreamingSeconds", (atLast[0] - atFirst[0]) / (double) RecvLogical.CLK_TCK);
  }
}
