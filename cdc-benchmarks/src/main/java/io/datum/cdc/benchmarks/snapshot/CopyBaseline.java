package io.datum.cdc.benchmarks.snapshot;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The server's own limit: {@code psql -c "COPY t TO STDOUT" > /dev/null}, in {@code p} parallel
 * processes. With several tables, the tables are dealt round-robin to the processes, each running
 * its COPYs one after the other; with one table and {@code p > 1}, each process copies a contiguous
 * range of the table's pages ({@code WHERE ctid >= '(a,0)' AND ctid < '(b,0)'}, a TID range scan).
 * One {@code /bin/sh} runs them all and prints its own {@code /proc/$$/stat} at the end, whose
 * {@code cutime + cstime} is the CPU time of every psql it waited for.
 */
final class CopyBaseline {
  private CopyBaseline() {}

  static void run(
      SnapshotOptions o,
      EmbeddedPostgresServer pg,
      List<String> tables,
      long tablePages,
      int parallelism,
      SnapshotResult r)
      throws Exception {
    List<List<String>> workers = new ArrayList<>();
    for (int i = 0; i < parallelism; i++) {
      workers.add(new ArrayList<>());
    }
    if (tables.size() == 1 && parallelism > 1) {
      long per = (tablePages + parallelism - 1) / parallelism;
      for (int i = 0; i < parallelism; i++) {
        String where =
            i == parallelism - 1
                ? String.format(Locale.ROOT, "ctid >= '(%d,0)'::tid", i * per)
                : String.format(
                    Locale.ROOT,
                    "ctid >= '(%d,0)'::tid AND ctid < '(%d,0)'::tid",
                    i * per,
                    (i + 1) * per);
        workers
            .get(i)
            .add("COPY (SELECT * FROM " + tables.get(0) + " WHERE " + where + ") TO STDOUT");
      }
    } else {
      for (int i = 0; i < tables.size(); i++) {
        workers.get(i % parallelism).add("COPY " + tables.get(i) + " TO STDOUT");
      }
    }
    StringBuilder script = new StringBuilder("rc=0\n");
    for (int w = 0; w < workers.size(); w++) {
      if (workers.get(w).isEmpty()) {
        continue;
      }
      script.append("( ");
      for (int i = 0; i < workers.get(w).size(); i++) {
        script.append(i == 0 ? "" : " && ").append(psql(o, pg, workers.get(w).get(i)));
      }
      script.append(" ) > /dev/null & p").append(w).append("=$!\n");
    }
    for (int w = 0; w < workers.size(); w++) {
      if (!workers.get(w).isEmpty()) {
        script.append("wait $p").append(w).append(" || rc=1\n");
      }
    }
    script.append("cat /proc/$$/stat\nexit $rc\n");
    ProcessBuilder b =
        new ProcessBuilder("/bin/sh", "-c", script.toString())
            .redirectError(ProcessBuilder.Redirect.INHERIT);
    if (!pg.password().isEmpty()) {
      b.environment().put("PGPASSWORD", pg.password());
    }
    long launched = System.nanoTime();
    Process p = b.start();
    String out;
    try (InputStream in = p.getInputStream()) {
      out = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
    }
    long ended = System.nanoTime();
    if (!p.waitFor(o.timeoutSeconds, TimeUnit.SECONDS) || p.exitValue() != 0 || out.isEmpty()) {
      p.destroyForcibly();
      throw new IllegalStateException("COPY failed (" + out + "); script:\n" + script);
    }
    ProcStat shell = ProcStat.parse(p.pid(), out);
    double seconds = (ended - launched) / 1e9;
    r.put("rows", r.values.get("expectedRows"))
        .put("complete", true)
        .put("seconds", seconds)
        .put("rowsPerSecond", ((Number) r.values.get("expectedRows")).doubleValue() / seconds)
        .put("firstToLastSeconds", Double.NaN)
        .put("peakHeapMB", Double.NaN)
        .put("liveHeapMB", Double.NaN)
        .put("consumerCpuSeconds", shell.children / ProcStat.CLK_TCK);
  }

  private static String psql(SnapshotOptions o, EmbeddedPostgresServer pg, String sql) {
    return String.join(
        " ",
        shq(o.psql),
        "-X",
        "-q",
        "-v",
        "ON_ERROR_STOP=1",
        "-h",
        EmbeddedPostgresServer.HOST,
        "-p",
        Integer.toString(pg.port()),
        "-U",
        shq(pg.user()),
        "-d",
        EmbeddedPostgresServer.DEFAULT_DATABASE,
        "-c",
        shq(sql));
  }

  private static String shq(String s) {
    return "'" + s.replace("'", "'\\''") + "'";
  }
}
