package io.datum.cdc.cli.stream;

import io.datum.cdc.core.SourceMetrics;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The progress of a running snapshot on stderr ({@code pgcdc stream}): on a terminal one line
 * redrawn with {@code '\r'} (a bar of rows read against the estimate, rows per second, time left,
 * tables done and left), otherwise a plain line every interval; in both cases one final line once
 * the snapshot completed. Nothing is written while no snapshot runs, and never to stdout.
 *
 * <p>{@link #start()} polls the figures on a daemon thread; {@link #poll(long)} is one poll, at a
 * given time, for the thread and for tests.
 */
final class SnapshotProgressReporter {

  private static final Logger LOG = LoggerFactory.getLogger(SnapshotProgressReporter.class);

  /** How often the figures are read, and a terminal line redrawn. */
  static final long POLL_MILLIS = 250;

  private static final int BAR_WIDTH = 30;

  /**
   * The figures of {@link SourceMetrics} the progress shows: those of the current run of snapshots
   * (rows read, acknowledged, the rate, the estimate), so that a snapshot asked for after another
   * completed starts again at 0 of its own tables' rows.
   *
   * @param resumed the run resumed snapshots a restart interrupted: the estimate counts their
   *     tables whole, so it and the time left are upper bounds
   * @param waiting what the snapshot waits for while it reads nothing, or null
   */
  record Figures(
      boolean inProgress,
      long tablesLeft,
      long tablesDone,
      long rangesLeft,
      long chunksDone,
      long chunksRetried,
      long rowsRead,
      long rowsAcknowledged,
      double rowsPerSecond,
      long rowsEstimated,
      double secondsLeft,
      boolean resumed,
      String waiting,
      long rowsReadAgain) {

    /** Returns the figures of {@code m}. */
    static Figures of(SourceMetrics m) {
      return new Figures(
          m.snapshotInProgress(),
          m.snapshotTablesLeft(),
          m.snapshotRunTablesDone(),
          m.snapshotRangesLeft(),
          m.snapshotRunChunks(),
          m.snapshotChunksRetried(),
          m.snapshotRunRowsRead(),
          m.snapshotRunRowsAcknowledged(),
          m.snapshotRowsPerSecond(),
          m.snapshotRowsEstimated(),
          m.snapshotSecondsLeft(),
          m.snapshotResumed(),
          m.snapshotWaiting(),
          m.snapshotRunRowsReadAgain());
    }
  }

  private final Supplier<Figures> figures;
  private final PrintStream err;
  private final boolean terminal;
  private final long intervalNanos;
  private final LongSupplier nanoTime;
  private Thread thread;

  // poll state, guarded by this
  private boolean reported; // a line of the snapshot in progress was written
  private long lastLineNanos;
  private long lastRowsRead;
  private long lastTablesDone;
  private int drawnWidth; // terminal: the length of the line drawn, 0 if none
  private boolean stopped;

  /**
   * @param figures reads the source's current figures
   * @param err where the lines go (stderr)
   * @param terminal whether {@code err} is a terminal: redraw one line instead of printing lines
   * @param intervalMillis the time between two plain lines (more than 0)
   * @param nanoTime the clock ({@link System#nanoTime} but in tests)
   */
  SnapshotProgressReporter(
      Supplier<Figures> figures,
      PrintStream err,
      boolean terminal,
      long intervalMillis,
      LongSupplier nanoTime) {
    if (intervalMillis <= 0) {
      throw new IllegalArgumentException("intervalMillis must be positive, was " + intervalMillis);
    }
    this.figures = figures;
    this.err = err;
    this.terminal = terminal;
    this.intervalNanos = intervalMillis * 1_000_000;
    this.nanoTime = nanoTime;
  }

  /**
   * Returns whether stderr is a terminal, as far as this platform shows it: on Linux, {@code
   * /proc/self/fd/2} links to {@code /dev/pts/N} or {@code /dev/ttyN}; false elsewhere, and when
   * {@code TERM} is {@code dumb}.
   */
  static boolean stderrIsATerminal() {
    if ("dumb".equals(System.getenv("TERM"))) {
      return false;
    }
    Path fd = Path.of("/proc/self/fd/2");
    try {
      if (!Files.isSymbolicLink(fd)) {
        return false;
      }
      String target = Files.readSymbolicLink(fd).toString();
      return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      LOG.debug("cannot tell what stderr is: {}", e.toString());
      return false;
    }
  }

  /** Starts polling on a daemon thread. */
  synchronized void start() {
    // named after the thread that starts it (pgcdc-stream-SLOT): its log lines name the slot
    thread = new Thread(this::run, Thread.currentThread().getName() + "-snapshot-progress");
    thread.setDaemon(true);
    thread.start();
  }

  private void run() {
    try {
      while (!Thread.currentThread().isInterrupted()) {
        poll(nanoTime.getAsLong());
        Thread.sleep(POLL_MILLIS); // a pace, not a synchronisation
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // stop() asked; it polls once more itself
    } catch (RuntimeException e) {
      LOG.warn("snapshot progress stopped: {}", e.toString(), e);
    }
  }

  /**
   * Stops polling and writes what is left to say: the final line of a snapshot that completed since
   * the last poll, or, for one still in progress, a line saying it stopped there (its progress is
   * stored and it resumes at the next start). Idempotent.
   */
  void stop() throws InterruptedException {
    Thread t;
    synchronized (this) {
      t = thread;
    }
    if (t != null) {
      t.interrupt();
      t.join();
    }
    synchronized (this) {
      if (stopped) {
        return;
      }
      stopped = true;
      Figures f = figures.get();
      poll(nanoTime.getAsLong(), f);
      if (f.inProgress() && reported) {
        endLine(
            "snapshot stopped before it completed: "
                + summary(f)
                + "; its progress is stored, and a restart with --snapshot reads only what is"
                + " left");
      }
    }
  }

  /** One poll at {@code now}: writes a line if one is due. */
  synchronized void poll(long now) {
    if (!stopped) {
      poll(now, figures.get());
    }
  }

  private void poll(long now, Figures f) {
    boolean changed = f.rowsRead() != lastRowsRead || f.tablesDone() != lastTablesDone;
    lastRowsRead = f.rowsRead();
    lastTablesDone = f.tablesDone();
    if (!f.inProgress()) {
      if (reported || changed) {
        // completed: since the last line, or between two polls
        endLine(
            "snapshot complete: "
                + plural(f.rowsRead(), "row")
                + " read"
                + (f.rowsReadAgain() == 0
                    ? ""
                    : " (" + f.rowsReadAgain() + " of them again, given up at a lost connection)")
                + ", "
                + f.rowsAcknowledged()
                + " acknowledged, "
                + plural(f.tablesDone(), "table")
                + " done, "
                + plural(f.chunksDone(), "chunk")
                + retried(f));
        reported = false;
      }
      return;
    }
    if (terminal) {
      String line = bar(f);
      int pad = Math.max(0, drawnWidth - line.length());
      err.print('\r' + line + " ".repeat(pad));
      err.flush();
      drawnWidth = line.length();
      reported = true;
    } else if (!reported || now - lastLineNanos >= intervalNanos) {
      err.println("pgcdc: snapshot: " + summary(f));
      err.flush();
      lastLineNanos = now;
      reported = true;
    }
  }

  /** Ends a drawn terminal line, then writes {@code text} as a line of its own. */
  private void endLine(String text) {
    if (drawnWidth > 0) {
      err.println();
      drawnWidth = 0;
    }
    err.println("pgcdc: " + text);
    err.flush();
  }

  /** The plain line's figures. */
  static String summary(Figures f) {
    StringBuilder s = new StringBuilder();
    s.append(f.rowsRead());
    if (f.rowsEstimated() > 0) {
      s.append(f.resumed() ? " of at most about " : " of about ").append(f.rowsEstimated());
    }
    s.append(f.rowsEstimated() > 0 || f.rowsRead() != 1 ? " rows read" : " row read");
    if (f.resumed()) {
      s.append(" since the restart");
    }
    if (f.rowsEstimated() > 0 && !f.resumed()) {
      // of a resumed run the estimate counts its tables whole: a share of it would mislead
      s.append(" (").append(percent(f)).append("%)");
    }
    s.append(", ").append(f.rowsAcknowledged()).append(" acknowledged, ");
    s.append(String.format(Locale.ROOT, "%.0f rows/s", f.rowsPerSecond()));
    s.append(", ETA ").append(eta(f));
    s.append(", tables: ")
        .append(f.tablesDone())
        .append(" done, ")
        .append(f.tablesLeft())
        .append(" left (")
        .append(plural(f.rangesLeft(), "key range"))
        .append(" left), ")
        .append(plural(f.chunksDone(), "chunk"))
        .append(retried(f));
    if (f.waiting() != null) {
      s.append("; waiting for ").append(f.waiting());
    }
    return s.toString();
  }

  /**
   * {@code " (N read again)"} for chunks an online snapshot read and discarded to stay consistent
   * with the stream; empty if none.
   */
  private static String retried(Figures f) {
    return f.chunksRetried() == 0
        ? ""
        : " (" + f.chunksRetried() + " discarded and read again to stay consistent)";
  }

  /** The terminal line: a bar, or the rows alone while the estimate is unknown. */
  static String bar(Figures f) {
    StringBuilder s = new StringBuilder("snapshot ");
    if (f.rowsEstimated() > 0 && !f.resumed()) {
      int filled = (int) Math.min(BAR_WIDTH, f.rowsRead() * BAR_WIDTH / f.rowsEstimated());
      s.append('[')
          .append("#".repeat(filled))
          .append(".".repeat(BAR_WIDTH - filled))
          .append("] ")
          .append(percent(f))
          .append("% ")
          .append(f.rowsRead())
          .append('/')
          .append(f.rowsEstimated());
    } else {
      s.append(f.rowsRead());
    }
    s.append(" rows, ")
        .append(String.format(Locale.ROOT, "%.0f rows/s", f.rowsPerSecond()))
        .append(", ETA ")
        .append(eta(f))
        .append(", tables ")
        .append(f.tablesDone())
        .append(" done/")
        .append(f.tablesLeft())
        .append(" left");
    return s.toString();
  }

  private static long percent(Figures f) {
    return Math.min(100, f.rowsRead() * 100 / f.rowsEstimated());
  }

  /**
   * The time left: {@link #eta(double)}, after {@code "at most "} for a resumed run (its estimate
   * counts its tables whole); {@code ?} with the reason when unknown.
   */
  static String eta(Figures f) {
    String t = eta(f.secondsLeft());
    if (t.equals("?")) {
      return f.rowsRead() == 0
          ? "? (no row read yet)"
          : "? (no row estimate: the tables are empty or were never analyzed)";
    }
    return f.resumed() ? "at most " + t : t;
  }

  /** {@code 1:02:03}, {@code 2:03}, or {@code ?} when unknown. */
  static String eta(double seconds) {
    if (Double.isNaN(seconds) || Double.isInfinite(seconds) || seconds < 0) {
      return "?";
    }
    long s = Math.round(seconds);
    return s >= 3600
        ? String.format(Locale.ROOT, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
        : String.format(Locale.ROOT, "%d:%02d", s / 60, s % 60);
  }

  private static String plural(long n, String noun) {
    return n + " " + noun + (n == 1 ? "" : "s");
  }
}
