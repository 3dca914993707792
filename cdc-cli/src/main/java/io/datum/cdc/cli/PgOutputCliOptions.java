package io.datum.cdc.cli;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.core.OriginFilter;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.StreamingMode;
import java.nio.file.Path;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * The pgoutput options of {@code pgcdc stream} (a picocli mixin): protocol version, streaming,
 * two-phase, binary, origin, and the memory budget of buffered transactions. Each option a server
 * is too old for makes the source refuse to start with a message naming it.
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
   * Sets the options on a source builder.
   *
   * @param builder the builder
   * @throws CdcConfigurationException if a value is not one of the allowed ones
   */
  void apply(PgCdcSource.Builder builder) {
    if (protocolVersion != null) {
      if (protocolVersion < 1 || protocolVersion > 4) {
        throw new CdcConfigurationException(
            "--proto-version must be 1 to 4, was " + protocolVersion);
      }
      builder.protocolVersion(protocolVersion);
    }
    builder.streaming(
        switch (streaming.toLowerCase(Locale.ROOT)) {
          case "off" -> StreamingMode.OFF;
          case "on" -> StreamingMode.ON;
          case "parallel" -> StreamingMode.PARALLEL;
          default ->
              throw new CdcConfigurationException(
                  "--streaming must be off, on or parallel, was \"" + streaming + '"');
        });
    if (origin != null) {
      builder.origin(
          switch (origin.toLowerCase(Locale.ROOT)) {
            case "any" -> OriginFilter.ANY;
            case "none" -> OriginFilter.NONE;
            default ->
                throw new CdcConfigurationException(
                    "--origin must be any or none, was \"" + origin + '"');
          });
    }
    builder.twoPhase(twoPhase).binary(binary).memoryBudget(parseSize(memoryBudget));
    if (spillDirectory != null) {
      builder.spillDirectory(spillDirectory);
    }
  }

  /**
   * Parses a size: digits, optionally followed by {@code k}, {@code m} or {@code g} (powers of
   * 1024, case-insensitive).
   *
   * @param text the size
   * @return bytes, at least 1
   * @throws CdcConfigurationException if it is not such a size or not positive
   */
  static long parseSize(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    int shift = 0;
    if (!t.isEmpty()) {
      switch (t.charAt(t.length() - 1)) {
        case 'k' -> shift = 10;
        case 'm' -> shift = 20;
        case 'g' -> shift = 30;
        default -> shift = 0;
      }
    }
    String digits = shift == 0 ? t : t.substring(0, t.length() - 1);
    try {
      long value = Long.parseLong(digits);
      if (value >= 1 && value <= (Long.MAX_VALUE >> shift)) {
        return value << shift;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new CdcConfigurationException(
        "--memory-budget must be a positive number of bytes, optionally with k, m or g, was \""
            + text
            + '"');
  }
}
