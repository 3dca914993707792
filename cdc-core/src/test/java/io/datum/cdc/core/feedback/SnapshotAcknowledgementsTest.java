package io.datum.cdc.core.feedback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpointException;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SnapshotProgress;
import io.datum.cdc.SnapshotProgress.KeyRange;
import io.datum.cdc.TableId;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SnapshotAcknowledgementsTest {

  private static final TableId A = new TableId("public", "a");
  private static final TableId B = new TableId("public", "b");
  private static final PgLsn CP = PgLsn.parse("0/100");

  @SuppressWarnings("unchecked")
  private static List<String>[] keys(int from, int to) {
    List<String>[] k = new List[to - from + 1];
    for (int i = from; i <= to; i++) {
      k[i - from] = List.of(Integer.toString(i));
    }
    return k;
  }

  private static CdcOffset row(long chunk, int index, int count) {
    return new CdcOffset("s", CP, CP, 0, index, count, chunk);
  }

  @Test
  void theBoundMovesOverTheAcknowledgedPrefixAndOutOfOrderKeysAreListed() {
    SnapshotAcknowledgements t = new SnapshotAcknowledgements(SnapshotProgress.NONE);
    t.startInitial(CP, List.of(A));
    SnapshotAcknowledgements.Range r = t.readTasks().get(0).range();
    long c1 = t.deliver(r, keys(1, 3), List.of("3"), false, List.of());
    long c2 = t.deliver(r, keys(4, 6), List.of("7"), true, List.of());
    assertEquals(CP, t.progress().holdLsn());
    t.record(row(c1, 0, 3));
    t.record(row(c1, 2, 3));
    t.record(row(c2, 1, 3));
    KeyRange p = t.progress().table(A).remaining().get(0);
    assertEquals(List.of("1"), p.after());
    assertEquals(List.of(List.of("3"), List.of("5")), p.acknowledged());
    t.record(row(c1, 1, 3));
    p = t.progress().table(A).remaining().get(0);
    assertEquals(List.of("3"), p.after(), "chunk 1 complete: the bound is its read-through key");
    assertEquals(List.of(List.of("5")), p.acknowledged());
    assertFalse(t.record(row(c2, 1, 3)), "acknowledged twice");
    t.recordChunk(row(c2, 0, 3));
    SnapshotProgress done = t.progress();
    assertTrue(done.initialCompleted());
    assertNull(done.holdLsn());
    assertTrue(done.isIdle());
    assertFalse(t.record(row(c2, 0, 3)), "a settled chunk: acknowledged before");
    assertThrows(CdcCheckpointException.class, () -> t.record(row(c2 + 1, 0, 3)), "never made");
  }

  @Test
  void anAcknowledgementOfAChunkGivenUpAtAReconnectIsNotRecordedAndDoesNotFail() {
    SnapshotAcknowledgements t = new SnapshotAcknowledgements(SnapshotProgress.NONE);
    t.startInitial(CP, List.of(A));
    SnapshotAcknowledgements.Range r = t.readTasks().get(0).range();
    long given = t.deliver(r, keys(1, 3), List.of("3"), false, List.of());
    t.resetInFlight(); // a reconnect: the chunk is read again
    assertEquals(3, t.figures()[11], "rows given up to be read again");
    // the handler was handling a row of it when the connection was lost
    assertFalse(t.record(row(given, 0, 3)));
    assertFalse(t.recordChunk(row(given, 0, 3)));
    r = t.readTasks().get(0).range();
    long again = t.deliver(r, keys(1, 3), List.of("3"), true, List.of());
    assertTrue(t.recordChunk(row(again, 0, 3)));
    assertTrue(t.progress().initialCompleted());
  }

  @Test
  void aRestoredRangeSkipsItsAcknowledgedKeysAndResetKeepsWhatWasAcknowledged() {
    SnapshotProgress stored =
        new SnapshotProgress(
            false,
            CP,
            List.of(
                new SnapshotProgress.TableSnapshot(
                    "initial",
                    A,
                    List.of(new KeyRange(List.of("10"), null, List.of(List.of("12")))))));
    SnapshotAcknowledgements t = new SnapshotAcknowledgements(stored);
    SnapshotAcknowledgements.ReadTask task = t.readTasks().get(0);
    assertEquals(List.of("10"), task.after());
    assertEquals(Set.of(List.of("12")), task.acknowledged());
    long c = t.deliver(task.range(), keys(11, 11), List.of("13"), false, List.of(List.of("12")));
    t.deliver(task.range(), keys(14, 15), List.of("15"), true, List.of());
    t.record(row(c, 0, 1));
    assertEquals(List.of("13"), t.progress().table(A).remaining().get(0).after());
    assertEquals(List.of(), t.progress().table(A).remaining().get(0).acknowledged());
    // the connection is lost: the unacknowledged chunk is read again from the bound
    t.resetInFlight();
    SnapshotAcknowledgements.ReadTask again = t.readTasks().get(0);
    assertEquals(List.of("13"), again.after());
  }

  @Test
  void splitRangesAndTablesWithoutAKeyAreAllOrNothing() {
    SnapshotAcknowledgements t = new SnapshotAcknowledgements(SnapshotProgress.NONE);
    t.startInitial(CP, List.of(A, B));
    SnapshotAcknowledgements.Range a = t.readTasks().get(0).range();
    List<SnapshotAcknowledgements.ReadTask> parts =
        t.split(a, List.of(List.of("100"), List.of("200")));
    assertEquals(3, parts.size());
    assertEquals(List.of("100"), parts.get(1).after());
    assertEquals(List.of("200"), parts.get(1).through());
    assertEquals(4, t.readTasks().size());
    SnapshotAcknowledgements.Range b = t.readTasks().get(3).range();
    @SuppressWarnings("unchecked")
    List<String>[] none = new List[2];
    long c = t.deliver(b, none, null, false, List.of());
    t.record(row(c, 0, 2));
    t.record(row(c, 1, 2));
    KeyRange whole = t.progress().table(B).remaining().get(0);
    assertNull(whole.after(), "a table without a key keeps no partial progress");
    long last = t.deliver(b, none, null, true, List.of());
    t.recordChunk(row(last, 0, 2));
    assertNull(t.progress().table(B));
    assertEquals(1, t.figures()[1], "tables done");
  }

  @Test
  void aTableReadAtAResetEndsOnlyOnceEveryEventIsAcknowledgedAndTheWatermarkPassedItsPosition() {
    SnapshotAcknowledgements t = new SnapshotAcknowledgements(SnapshotProgress.NONE);
    t.add("request-0/1", List.of(A));
    SnapshotAcknowledgements.Range r = t.readTasks().get(0).range();
    PgLsn at = PgLsn.parse("0/500");
    long reset = t.deliverReset(r, at);
    @SuppressWarnings("unchecked")
    List<String>[] none = new List[3];
    long rows = t.deliver(r, none, null, true, List.of());
    assertTrue(t.readTasks().isEmpty(), "read to its end");
    t.record(row(rows, 0, 3));
    t.recordChunk(row(rows, 1, 3));
    KeyRange whole = t.progress(PgLsn.parse("0/900")).table(A).remaining().get(0);
    assertNull(whole.after(), "the reset is not acknowledged: the table is read again whole");
    t.record(row(reset, 0, 1));
    assertTrue(t.inProgress());
    whole = t.progress(PgLsn.parse("0/4FF")).table(A).remaining().get(0);
    assertEquals(new KeyRange(null, null, List.of()), whole, "the watermark is before the reset");
    assertTrue(t.progress().table(A) != null, "no watermark given: the table stays");
    assertTrue(t.readTasks().isEmpty(), "nothing to read meanwhile");
    assertNull(t.progress(at).table(A), "the watermark reached the reset's position");
    assertFalse(t.inProgress());
    assertEquals(1, t.figures()[1], "tables done");
  }

  @Test
  void aTableReadAtAResetIsReadAgainWholeAfterAReconnectOrAFailedRead() {
    SnapshotAcknowledgements t = new SnapshotAcknowledgements(SnapshotProgress.NONE);
    t.add("request-0/1", List.of(A));
    SnapshotAcknowledgements.Range r = t.readTasks().get(0).range();
    long reset = t.deliverReset(r, PgLsn.parse("0/500"));
    @SuppressWarnings("unchecked")
    List<String>[] none = new List[2];
    long first = t.deliver(r, none, null, false, List.of());
    // the read failed part way: what went out stays to be acknowledged, the table is read again
    t.readAgain(r);
    assertEquals(1, t.readTasks().size());
    assertNull(t.readTasks().get(0).after());
    t.record(row(reset, 0, 1));
    t.recordChunk(row(first, 0, 2));
    long reset2 = t.deliverReset(r, PgLsn.parse("0/700"));
    long all = t.deliver(r, none, null, true, List.of());
    t.recordChunk(row(all, 0, 2));
    t.record(row(reset2, 0, 1));
    assertTrue(t.progress(PgLsn.parse("0/600")).table(A) != null, "ends at the second reset");
    // a reconnect before the watermark passed it: read again whole, after a new reset
    t.resetInFlight();
    assertEquals(1, t.readTasks().size());
    assertTrue(t.progress(PgLsn.parse("0/800")).table(A) != null, "no longer waiting to end");
  }

  @Test
  void readersWaitWhileTooManyRowsAreUnsettledAndGoOnOnceTheOldestIsAcknowledged()
      throws Exception {
    SnapshotAcknowledgements t = new SnapshotAcknowledgements(SnapshotProgress.NONE);
    t.add("request-0/1", List.of(A));
    SnapshotAcknowledgements.Range r = t.readTasks().get(0).range();
    int half = (int) (SnapshotAcknowledgements.MAX_UNSETTLED_ROWS / 2);
    @SuppressWarnings("unchecked")
    List<String>[] many = new List[half];
    java.util.Arrays.fill(many, List.of("k"));
    long first = t.deliver(r, many, List.of("k"), false, List.of());
    assertTrue(t.awaitRoom(10));
    long second = t.deliver(r, many.clone(), List.of("l"), false, List.of());
    t.recordChunk(row(second, 0, half)); // complete, but behind the unacknowledged first
    assertFalse(t.awaitRoom(10), "the first chunk holds the second's keys");
    assertEquals(first, t.unsettled()[1]);
    t.recordChunk(row(first, 0, half));
    assertTrue(t.awaitRoom(10));
    assertEquals(0, t.unsettled()[0]);
  }
}
