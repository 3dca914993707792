package io.datum.cdc.benchmarks.e2e;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command lines of the consumers the harnesses start as processes of their own ({@code
 * pg_recvlogical}, {@code pgcdc stream}), and the class path of a Debezium child. Public for the
 * latency harness ({@code io.datum.cdc.benchmarks.latency}).
 */
public final class ConsumerCommands {
  private ConsumerCommands() {}

  /**
   * {@code pg_recvlogical --start} on a pgoutput slot ({@code proto_version=1}), writing to {@code
   * file} ({@code -} for stdout), without status-file syncs, once ({@code --no-loop}).
   *
   * @param executable the pg_recvlogical binary
   * @param pg the server
   * @param slot the slot
   * @param publication the publication
   * @param file where it writes
   * @return the command
   */
  public static List<String> pgRecvlogical(
      String executable, EmbeddedPostgresServer pg, String slot, String publication, String file) {
    return List.of(
        executable,
        "--start",
        "-S",
        slot,
        "-d",
        EmbeddedPostgresServer.DEFAULT_DATABASE,
        "-h",
        EmbeddedPostgresServer.HOST,
        "-p",
        Integer.toString(pg.port()),
        "-U",
        pg.user(),
        "-o",
        "proto_version=1",
        "-o",
        "publication_names=" + publication,
        "-f",
        file,
        "-F",
        "0",
        "-s",
        "1",
        "--no-loop");
  }

  /**
   * {@code pgcdc stream} (cdc-cli's jar) in its default mode on an existing slot, trusting its
   * position (the store is new), with a {@code file:} store.
   *
   * @param jvmArgs the JVM's options
   * @param jar cdc-cli's jar
   * @param pg the server
   * @param slot the slot
   * @param publication the publication
   * @param store the store's directory
   * @return the command
   */
  public static List<String> pgcdcStream(
      List<String> jvmArgs,
      String jar,
      EmbeddedPostgresServer pg,
      String slot,
      String publication,
      Path store) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvmArgs);
    cmd.addAll(
        List.of(
            "-jar",
            jar,
            "stream",
            "--url",
            pg.jdbcUrl(),
            "--user",
            pg.user(),
            "--slot",
            slot,
            "--publication",
            publication,
            "--trust-slot-position",
            "--store",
            "file:" + store));
    return cmd;
  }

  /**
   * The Kafka 4.3 jars Debezium 3.6.1 is built against, to go in front of the class path of its
   * child: those in {@code dir}, or in {@code debezium-kafka} next to the jar this class came from
   * (the build copies them there).
   *
   * @param dir the directory, or null for the one next to the jar
   * @return the jars, each followed by the path separator
   * @throws Exception if the directory is missing or cannot be listed
   */
  public static String debeziumKafkaClassPath(String dir) throws Exception {
    Path d;
    if (dir != null) {
      d = Path.of(dir);
    } else {
      Path jar =
          Path.of(
              ConsumerCommands.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      d = jar.resolveSibling("debezium-kafka");
    }
    if (!Files.isDirectory(d)) {
      throw new IllegalStateException(
          d + " is missing; build cdc-benchmarks or pass --debezium-kafka-dir");
    }
    StringBuilder cp = new StringBuilder();
    try (var jars = Files.list(d)) {
      jars.filter(f -> f.toString().endsWith(".jar"))
          .sorted()
          .forEach(f -> cp.append(f.toAbsolutePath()).append(File.pathSeparatorChar));
    }
    return cp.toString();
  }
}
