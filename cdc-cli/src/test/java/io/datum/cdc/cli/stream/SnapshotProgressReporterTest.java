package io.datum.cdc.cli.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.datum.cdc.cli.stream.SnapshotProgressReporter.Figures;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** What {@link SnapshotProgressReporter} writes, driven by a fake clock and fake figures. */
class SnapshotProgressReporterTest {

  private static final long SECOND = 1_000_000_000L;

  private final AtomicReference<Figures> figures = new AtomicReference<>(idle(0, 0));
  private final AtomicLong now = new AtomicLong();
  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

  private static Figures idle(long rows, long tablesDone) {
    return new Figures(false, 0, tablesDone, 0, 4, 0, rows, rows, 0, 0, 0, false, null, 0);
  }

  private static Figures running(long read, long acked, long estimated) {
    return new Figures(true, 2, 1, 3, 7, 1, read, acked, 250, estimated, 90, false, null, 0);
  }

  private SnapshotProgressReporter reporter(boolean terminal) {
    return new SnapshotProgressReporter(
        figures::get,
        new PrintStream(bytes, true, StandardCharsets.UTF_8),
        terminal,
        5000,
        now::get);
  }

  private String written() {
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void plainLinesComeOnceAtTheStartThenEveryIntervalThenOneFinalLine() throws Exception {
    SnapshotProgressReporter r = reporter(false);
    r.poll(now.get());
    assertEquals("", written(), "nothing while no snapshot runs");
    figures.set(running(1000, 900, 4000));
    r.poll(now.addAndGet(SECOND));
    String first =
        "pgcdc: snapshot: 1000 of about 4000 rows read (25%), 900 acknowledged, 250 rows/s, ETA"
            + " 1:30, tables: 1 done, 2 left (3 key ranges left), 7 chunks (1 discarded and read again to"
            + " stay consistent)\n";
    assertEquals(first, written());
    figures.set(running(2000, 1900, 4000));
    r.poll(now.addAndGet(4 * SECOND));
    assertEquals(first, written(), "not before the interval");
    r.poll(now.addAndGet(SECOND));
    String second = first.replace("1000 of", "2000 of").replace("25%), 900", "50%), 1900");
    assertEquals(first + second, written());
    figures.set(idle(4000, 3));
    r.poll(now.addAndGet(SECOND));
    String done =
        "pgcdc: snapshot complete: 4000 rows read, 4000 acknowledged, 3 tables done, 4 chunks\n";
    assertEquals(first + second + done, written());
    r.stop();
    assertEquals(first + second + done, written(), "said once");
  }

  @Test
  void aSnapshotThatRanBetweenTwoPollsStillGetsItsFinalLine() throws Exception {
    SnapshotProgressReporter r = reporter(false);
    r.poll(now.get());
    figures.set(idle(12, 1));
    r.stop();
    assertEquals(
        "pgcdc: snapshot complete: 12 rows read, 12 acknowledged, 1 table done, 4 chunks\n",
        written());
  }

  @Test
  void aSnapshotStillRunningAtTheStopSaysItResumes() throws Exception {
    SnapshotProgressReporter r = reporter(false);
    figures.set(running(10, 5, 0));
    r.poll(now.get());
    r.stop();
    String summary =
        "10 rows read, 5 acknowledged, 250 rows/s, ETA 1:30, tables: 1 done, 2 left (3 key ranges"
            + " left), 7 chunks (1 discarded and read again to stay consistent)";
    assertEquals(
        "pgcdc: snapshot: "
            + summary
            + "\npgcdc: snapshot stopped before it completed: "
            + summary
            + "; its progress is stored, and a restart with --snapshot reads only what is left\n",
        written());
  }

  @Test
  void aTerminalRedrawsOneLineWithABar() throws Exception {
    SnapshotProgressReporter r = reporter(true);
    figures.set(running(1000, 0, 4000));
    r.poll(now.get());
    figures.set(running(4000, 0, 4000));
    r.poll(now.addAndGet(SECOND / 4));
    figures.set(idle(4000, 3));
    r.poll(now.addAndGet(SECOND / 4));
    assertEquals(
        "\rsnapshot [#######.......................] 25% 1000/4000 rows, 250 rows/s, ETA 1:30,"
            + " tables 1 done/2 left"
            + "\rsnapshot [##############################] 100% 4000/4000 rows, 250 rows/s, ETA"
            + " 1:30, tables 1 done/2 left"
            + "\npgcdc: snapshot complete: 4000 rows read, 4000 acknowledged, 3 tables done, 4"
            + " chunks\n",
        written());
  }

  @Test
  void aResumedRunSaysItsEstimateIsAnUpperBoundAndAWaitSaysWhatItWaitsFor() {
    Figures resumed = new Figures(true, 1, 0, 1, 2, 0, 500, 400, 100, 4000, 35, true, null, 0);
    assertEquals(
        "500 of at most about 4000 rows read since the restart, 400 acknowledged, 100"
            + " rows/s, ETA at most 0:35, tables: 0 done, 1 left (1 key range left), 2 chunks",
        SnapshotProgressReporter.summary(resumed));
    Figures waiting =
        new Figures(
            true,
            1,
            0,
            1,
            0,
            0,
            0,
            0,
            0,
            4000,
            Double.NaN,
            false,
            "the stream to reach 0/16B3F20",
            0);
    assertEquals(
        "0 of about 4000 rows read (0%), 0 acknowledged, 0 rows/s, ETA ? (no row read yet),"
            + " tables: 0 done, 1 left (1 key range left), 0 chunks; waiting for the stream to"
            + " reach 0/16B3F20",
        SnapshotProgressReporter.summary(waiting));
    Figures unanalyzed = new Figures(true, 1, 0, 1, 1, 0, 9, 0, 9, 0, Double.NaN, false, null, 0);
    assertEquals(
        "9 rows read, 0 acknowledged, 9 rows/s, ETA ? (no row estimate: the tables are empty or"
            + " were never analyzed), tables: 0 done, 1 left (1 key range left), 1 chunk",
        SnapshotProgressReporter.summary(unanalyzed));
  }

  @Test
  void etaIsMinutesAndSecondsOrHoursOrUnknown() {
    assertEquals("0:05", SnapshotProgressReporter.eta(4.6));
    assertEquals("1:01:01", SnapshotProgressReporter.eta(3661));
    assertEquals("?", SnapshotProgressReporter.eta(Double.NaN));
  }
}
