package io.datum.cdc.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The postmaster of a data directory, as an operating system process: found by the pid in {@code
 * postmaster.pid}, signalled as {@code pg_ctl stop} does, waited for.
 *
 * <p>The postmaster is not a child of this JVM ({@code pg_ctl} starts it detached), so its exit is
 * seen by polling; a postmaster that has exited but that its new parent has not reaped yet (a
 * zombie; in containers pid 1 may take a second or more) counts as exited, read from {@code
 * /proc/PID/stat} on Linux.
 */
final class Postmaster {

  private static final System.Logger LOG = System.getLogger(Postmaster.class.getName());
  private static final Duration POLL = Duration.ofMillis(10);

  private final ProcessHandle process;

  private Postmaster(ProcessHandle process) {
    this.process = process;
  }

  /**
   * The postmaster of a data directory, if {@code postmaster.pid} names a live process.
   *
   * @param dataDirectory the data directory; not {@code null}
   * @return the postmaster, or empty if there is no {@code postmaster.pid}, it names no pid, or its
   *     process has exited
   * @throws UncheckedIOException if {@code postmaster.pid} exists but cannot be read
   */
  static Optional<Postmaster> of(Path dataDirectory) {
    Path pidFile = dataDirectory.resolve("postmaster.pid");
    List<String> lines;
    try {
      lines = Files.readAllLines(pidFile, StandardCharsets.US_ASCII);
    } catch (NoSuchFileException e) {
      return Optional.empty();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + pidFile, e);
    }
    long pid;
    try {
      pid = lines.isEmpty() ? 0 : Long.parseLong(lines.get(0).trim());
    } catch (NumberFormatException e) {
      return Optional.empty(); // being written by a starting postmaster, or left half-written
    }
    return pid > 0
        ? ProcessHandle.of(pid).filter(p -> !hasExited(p)).map(Postmaster::new)
        : Optional.empty();
  }

  /**
   * The postmaster's pid.
   *
   * @return the pid, positive
   */
  long pid() {
    return process.pid();
  }

  /**
   * Tells whether the postmaster is still running.
   *
   * @return {@code false} once it has exited, zombie or reaped
   */
  boolean isAlive() {
    return !hasExited(process);
  }

  /**
   * Tells whether the process runs a {@code postgres} binary, so that a pid reused by another
   * process since {@code postmaster.pid} was written is not signalled.
   *
   * @return {@code true} if its command is known and ends with {@code /postgres}
   */
  boolean isPostgres() {
    return process.info().command().map(c -> c.endsWith("/postgres")).orElse(false);
  }

  /**
   * Shuts the postmaster down and waits until it has exited. {@link
   * EmbeddedPostgresServer.ShutdownMode#FAST FAST} sends {@code SIGINT} and, after {@code
   * fastTimeout}, escalates to {@code SIGQUIT}; {@link
   * EmbeddedPostgresServer.ShutdownMode#IMMEDIATE IMMEDIATE} sends {@code SIGQUIT}; a postmaster
   * that has not exited 15 seconds after {@code SIGQUIT} (it {@code SIGKILL}s its children after 5)
   * is killed with {@code SIGKILL}. Returns at once if it has exited already.
   *
   * @param mode how to shut down; not {@code null}
   * @param fastTimeout how long a fast shutdown may take; not {@code null} when {@code mode} is
   *     {@code FAST}
   * @throws IllegalStateException if the postmaster does not exit even after {@code SIGKILL}, or
   *     the thread is interrupted
   * @throws UncheckedIOException if the signal cannot be sent
   */
  void shutDown(EmbeddedPostgresServer.ShutdownMode mode, Duration fastTimeout) {
    if (hasExited(process)) {
      return;
    }
    if (mode == EmbeddedPostgresServer.ShutdownMode.FAST) {
      signal("INT");
      if (waitForExit(fastTimeout, false)) {
        return;
      }
      LOG.log(
          System.Logger.Level.WARNING,
          "fast shutdown of the embedded PostgreSQL (pid "
              + pid()
              + ") took more than "
              + fastTimeout
              + "; shutting it down immediately");
    }
    signal("QUIT");
    if (waitForExit(Duration.ofSeconds(15), false)) {
      return;
    }
    LOG.log(
        System.Logger.Level.WARNING,
        "immediate shutdown of the embedded PostgreSQL (pid "
            + pid()
            + ") did not finish; killing");
    process.destroyForcibly();
    // the next postmaster must not find this one's pid alive, even as a zombie
    if (!waitForExit(Duration.ofSeconds(10), true)) {
      throw new IllegalStateException(
          "the embedded PostgreSQL postmaster (pid " + pid() + ") does not exit");
    }
  }

  @Override
  public String toString() {
    return "postmaster " + pid();
  }

  /**
   * Tells whether a process has exited: not alive, or a zombie.
   *
   * @param process the process; not {@code null}
   * @return {@code true} if it has exited
   */
  static boolean hasExited(ProcessHandle process) {
    return !process.isAlive() || isZombie(process.pid());
  }

  private static boolean isZombie(long pid) {
    Path stat = Paths.get("/proc", Long.toString(pid), "stat");
    try {
      String text = Files.readString(stat, StandardCharsets.US_ASCII);
      int end = text.lastIndexOf(')');
      return end >= 0 && end + 2 < text.length() && text.charAt(end + 2) == 'Z';
    } catch (NoSuchFileException e) {
      return false; // no /proc (macOS), or the process is gone, which isAlive tells
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + stat, e);
    }
  }

  private boolean waitForExit(Duration timeout, boolean reaped) {
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      while (reaped ? process.isAlive() : !hasExited(process)) {
        if (System.nanoTime() - deadline >= 0) {
          return false;
        }
        Thread.sleep(POLL.toMillis()); // not a child: there is nothing to wait on
      }
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for " + this + " to exit", e);
    }
  }

  /** Sends a signal with the shell's kill: Java can only send SIGTERM and SIGKILL. */
  private void signal(String signal) {
    try {
      Process kill =
          new ProcessBuilder("sh", "-c", "kill -s \"$0\" \"$1\"", signal, Long.toString(pid()))
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      if (!kill.waitFor(10, TimeUnit.SECONDS)) {
        kill.destroyForcibly();
        throw new IOException("kill -s " + signal + " " + pid() + " did not finish in 10 s");
      }
      // a non-zero exit: the process exited meanwhile; shutDown sees it exited
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot signal the embedded PostgreSQL (pid " + pid() + ")", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while signalling " + this, e);
    }
  }

  /**
   * The exception a failed start throws: the cause's message, then the last 30 lines of the server
   * log, which say why PostgreSQL did not start.
   *
   * @param baseDirectory the server's base directory, for the message; may be {@code null}
   * @param log the server log; not {@code null}
   * @param cause what failed; not {@code null}
   * @return the exception to throw, its cause an {@link IOException}; never {@code null}
   */
  static UncheckedIOException startFailure(Path baseDirectory, Path log, Exception cause) {
    IOException io =
        cause instanceof UncheckedIOException u
            ? u.getCause()
            : cause instanceof IOException i ? i : new IOException(cause);
    String tail;
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      tail = String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException | RuntimeException e) {
      tail = "(unreadable: " + e + ")";
    }
    return new UncheckedIOException(
        "cannot start the embedded PostgreSQL in "
            + baseDirectory
            + ": "
            + cause.getMessage()
            + "; end of the server log "
            + log
            + ":\n"
            + tail,
        io);
  }
}
