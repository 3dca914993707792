package io.datum.cdc.cli.stream;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.core.config.SourceOptions;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The pgoutput options of {@code pgcdc stream} (a picocli mixin): protocol version, streaming,
 * two-phase, binary, origin, and the memory budget of buffered transactions. Each option a server
 * is too old for makes the source refuse to start with a message naming it. The values are read and
 * checked through {@link StreamFlags}, by the options' declarations.
 */
final class PgOutputCliOptions {

  @Option(
      names = "--proto-version",
      paramLabel = "N",
      description =
          "pgoutput protocol version 1-4 (default: the highest the server supports:"
              + " 1 before PostgreSQL 14, 2 on 14, 3 on 15, 4 on 16+)")
  Integer protocolVersion;

  @Option(
      names = "--streaming",
      paramLabel = "off|on|parallel",
      defaultValue = "off",
      description =
          "let PostgreSQL stream large in-progress transactions (on: 14+, parallel: 16+);"
              + " they are still printed only once committed (default off)")
  String streaming;

  @Option(
      names = "--two-phase",
      description =
          "decode prepared transactions at PREPARE TRANSACTION (15+; marks the slot"
              + " two-phase); they are printed at COMMIT PREPARED, never after ROLLBACK PREPARED")
  boolean twoPhase;

  @Option(names = "--binary", description = "receive column values in binary format (14+)")
  boolean binary;

  @Option(
      names = "--origin",
      paramLabel = "any|none",
      description =
          "none: only changes without a replication origin, any: all (16+; default:"
              + " option not sent)")
  String origin;

  @Option(
      names = "--memory-budget",
      paramLabel = "SIZE",
      defaultValue = "64m",
      description =
          "memory for buffered transactions before one spills to a temporary file:"
              + " bytes, or a number with k, m or g (1024-based); default 64m")
  String memoryBudget;

  @Option(
      names = "--spill-dir",
      paramLabel = "DIR",
      description = "directory for spill files (default: java.io.tmpdir)")
  Path spillDirectory;

  /**
   * Parses a size: digits, optionally followed by {@code k}, {@code m} or {@code g} (powers of
   * 1024, case-insensitive), as the memory-budget option's declaration reads it.
   *
   * @param text the size
   * @return bytes, at least 1
   * @throws CdcConfigurationException if it is not such a size or not positive, naming the flag
   */
  static long parseSize(String text) {
    return StreamFlags.parse("--memory-budget", SourceOptions.MEMORY_BUDGET, text);
  }
}
