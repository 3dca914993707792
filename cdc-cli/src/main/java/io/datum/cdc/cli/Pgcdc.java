package io.datum.cdc.cli;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcReplicationException;
import io.datum.cdc.cli.stream.StreamCommand;
import io.datum.cdc.core.errors.PgErrors;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code pgcdc} command: streams PostgreSQL changes as JSON lines ({@code stream}) and shows
 * datum-cdc on an embedded PostgreSQL ({@code demo}). Exit codes: 0 success, 1 failure (one line on
 * stderr; the stack trace with {@code --verbose}), 2 bad usage or configuration (a missing or
 * malformed option, an invalid slot name, an unknown store scheme).
 */
@Command(
    name = "pgcdc",
    mixinStandardHelpOptions = true,
    versionProvider = Pgcdc.Version.class,
    description = "PostgreSQL change data capture: committed row changes as JSON lines.",
    subcommands = {
      StreamCommand.class,
      SnapshotCommand.class,
      DemoCommand.class,
      CheckpointCommand.class,
      SlotCommand.class,
      StatusCommand.class,
      CommandLine.HelpCommand.class
    })
public final class Pgcdc {

  private Pgcdc() {}

  /**
   * Runs the command line and exits the JVM with its exit code.
   *
   * @param args the arguments
   */
  public static void main(String[] args) {
    // logs go to stderr (slf4j-simple's default); warnings only unless --verbose
    if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
      System.setProperty(
          "org.slf4j.simpleLogger.defaultLogLevel",
          Arrays.asList(args).contains("--verbose") ? "info" : "warn");
    }
    System.exit(run(args));
  }

  /**
   * Runs the command line.
   *
   * @param args the arguments
   * @return the exit code
   */
  public static int run(String... args) {
    return run(null, null, args);
  }

  /**
   * Runs the command line, printing picocli's output (help, usage and the error line) to the
   * writers given instead of stdout and stderr; for tests of usage errors without a child JVM.
   *
   * @param out picocli's stdout, or null for stdout
   * @param err picocli's stderr, or null for stderr
   * @param args the arguments
   * @return the exit code
   */
  static int run(java.io.PrintWriter out, java.io.PrintWriter err, String... args) {
    CommandLine cli = new CommandLine(new Pgcdc());
    StreamCommand.deriveFlags(cli.getSubcommands().get("stream").getCommandSpec());
    if (out != null) {
      cli.setOut(out);
    }
    if (err != null) {
      cli.setErr(err);
    }
    cli.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          if (e instanceof io.datum.cdc.cli.common.ExitStatus end) {
            commandLine.getErr().println("pgcdc: " + end.getMessage());
            return end.status();
          }
          boolean verbose = parseResult.originalArgs().contains("--verbose");
          String message = e.getMessage() != null ? e.getMessage() : e.toString();
          // one line: server errors carry DETAIL/WHERE lines
          commandLine
              .getErr()
              .println("pgcdc: error: " + message.strip().replaceAll("\\s*\\R\\s*", "; "));
          if (verbose) {
            e.printStackTrace(commandLine.getErr());
          }
          // bad input given on the command line is a usage error, like picocli's own; so is a
          // fault retrying cannot fix (authentication, a missing privilege or database, a server
          // limit: PgErrors.isPermanent), whose message names the remedy; and so is a slot or
          // publication the command line names that does not exist or is not pgoutput's
          return e instanceof CdcConfigurationException
                  || PgErrors.isPermanent(e)
                  || namesAMissingObject(e)
              ? 2
              : 1;
        });
    return cli.execute(args);
  }

  /**
   * True if the failure, or one of its causes, is a slot or publication named on the command line
   * that does not exist (and was not to be created) or is not a pgoutput slot: configuration, as a
   * misspelt option is, which retrying cannot fix (docs/pgcdc.md: exit 2).
   */
  static boolean namesAMissingObject(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof CdcReplicationException r
          && (r.reason() == CdcReplicationException.Reason.SLOT_MISSING
              || r.reason() == CdcReplicationException.Reason.PUBLICATION_MISSING
              || r.reason() == CdcReplicationException.Reason.SLOT_INCOMPATIBLE)) {
        return true;
      }
    }
    return false;
  }

  /** Reads the version Maven wrote into {@code version.properties} at build time. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() throws IOException {
      return new String[] {"pgcdc " + version()};
    }

    /**
     * Returns the project version, as in {@code pom.xml}.
     *
     * @throws IOException if the resource is missing or unfiltered (a build that skipped Maven's
     *     resource processing)
     */
    static String version() throws IOException {
      Properties p = new Properties();
      try (InputStream in = Pgcdc.class.getResourceAsStream("version.properties")) {
        if (in == null) {
          throw new IOException("version.properties is missing from the pgcdc build");
        }
        p.load(in);
      }
      String v = p.getProperty("version", "");
      if (v.isEmpty() || v.contains("${")) {
        throw new IOException("version.properties was not filtered by Maven: \"" + v + '"');
      }
      return v;
    }
  }
}
