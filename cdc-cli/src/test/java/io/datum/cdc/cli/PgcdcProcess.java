package io.datum.cdc.cli;

import io.datum.cdc.embedded.ChildJvm;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs {@code pgcdc} in a child JVM, as the tests of this module do. */
final class PgcdcProcess {

  private PgcdcProcess() {}

  /** What a finished {@code pgcdc} run printed, and its exit code. */
  record Run(int exitCode, List<String> stdout, String stderr) {}

  /**
   * The command line that runs {@code pgcdc args...} in a child JVM on this test's class path, with
   * {@link ChildJvm#QUICK_START_OPTIONS}.
   */
  static List<String> command(String... args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(ChildJvm.QUICK_START_OPTIONS);
    command.addAll(List.of("-cp", ChildJvm.classPath(), Pgcdc.class.getName()));
    command.addAll(List.of(args));
    return command;
  }

  /**
   * Runs {@code pgcdc args...} to its end (at most 120 s), its output in files under {@code dir}.
   */
  static Run pgcdc(Path dir, String... args) throws Exception {
    return pgcdc(dir, env -> {}, args);
  }

  /**
   * Runs {@code pgcdc args...} like {@link #pgcdc(Path, String...)}, with the child's environment
   * changed by {@code environment} first.
   */
  static Run pgcdc(
      Path dir,
      java.util.function.Consumer<java.util.Map<String, String>> environment,
      String... args)
      throws Exception {
    Path out = dir.resolve("stdout-" + System.nanoTime());
    Path err = dir.resolve("stderr-" + System.nanoTime());
    ProcessBuilder b =
        new ProcessBuilder(command(args)).redirectOutput(out.toFile()).redirectError(err.toFile());
    environment.accept(b.environment());
    Process p = b.start();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("pgcdc " + String.join(" ", args) + " did not exit within 120 s");
    }
    return new Run(
        p.exitValue(),
        Files.readAllLines(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }

  /**
   * Runs {@code pgcdc args...} in this JVM (no child JVM to start: a second or more saved per call)
   * for a run expected to end at once with a usage error: what picocli prints (the error line) is
   * captured; failing after 60 s if it does not end.
   */
  static Run pgcdcInProcess(String... args) {
    java.io.StringWriter out = new java.io.StringWriter();
    java.io.StringWriter err = new java.io.StringWriter();
    int code =
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
            java.time.Duration.ofSeconds(60),
            () ->
                Pgcdc.run(
                    new java.io.PrintWriter(out, true), new java.io.PrintWriter(err, true), args),
            () -> "pgcdc " + String.join(" ", args) + " did not end within 60 s");
    return new Run(code, out.toString().lines().toList(), err.toString());
  }

  /**
   * The arguments of {@code pgcdc stream} against {@code pg} with a {@code file:} store, then
   * {@code extra}.
   */
  static String[] streamArgs(
      EmbeddedPostgresServer pg, Path store, String slot, String publication, String... extra) {
    return streamArgs(pg.jdbcUrl(), pg.user(), store, slot, publication, extra);
  }

  /**
   * The arguments of {@code pgcdc stream} against the server(s) {@code url} names, as {@code user},
   * with a {@code file:} store, then {@code extra}.
   */
  static String[] streamArgs(
      String url, String user, Path store, String slot, String publication, String... extra) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "stream",
                "--url",
                url,
                "--user",
                user,
                "--slot",
                slot,
                "--publication",
                publication,
                "--store",
                "file:" + store));
    args.addAll(List.of(extra));
    return args.toArray(new String[0]);
  }
}
