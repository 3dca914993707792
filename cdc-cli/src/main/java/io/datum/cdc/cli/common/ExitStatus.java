package io.datum.cdc.cli.common;

/**
 * Ends a pgcdc command with a given exit status and one line on stderr ({@code pgcdc: MESSAGE}),
 * for an end that is neither success nor an error: stdout closed by its reader (status 141, as a
 * shell reports a process ended by {@code SIGPIPE}).
 */
public final class ExitStatus extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** The status of a command whose stdout was closed by its reader: 128 + SIGPIPE (13). */
  public static final int CLOSED_PIPE = 141;

  private final int status;

  /**
   * @param status the exit status, 1 to 255
   * @param message the line to print after {@code pgcdc: }, not null
   */
  public ExitStatus(int status, String message) {
    super(message, null, false, false);
    this.status = status;
  }

  /** Returns the exit status. */
  public int status() {
    return status;
  }
}
