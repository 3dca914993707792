package io.datum.cdc.core.feedback;

import io.datum.cdc.CdcCheckpointException;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SnapshotProgress;
import io.datum.cdc.SnapshotProgress.KeyRange;
import io.datum.cdc.SnapshotProgress.TableSnapshot;
import io.datum.cdc.TableId;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which rows of the source's snapshots were acknowledged: the snapshot half of a checkpoint ({@link
 * SnapshotProgress}), beside the {@link FeedbackCoordinator}'s stream positions.
 *
 * <p>Each table in progress has key ranges left to read. Readers take a range's {@link
 * Range#readCursor() read cursor}, read the next chunk of rows after it in key order, and {@link
 * #deliver} it: the chunk's rows get offsets (chunk number and row index) and the cursor moves past
 * the chunk. Acknowledgements mark rows; a range's acknowledged bound ({@link KeyRange#after()})
 * moves over the contiguous acknowledged prefix of its chunks in delivery order, so a checkpoint
 * lists individual keys only for rows acknowledged out of order. A range whose last chunk is
 * acknowledged is gone; a table without ranges is done; when the tables of the initial snapshot are
 * all done, it is complete and the slot is no longer held at its consistent point.
 *
 * <p>Thread-safe: one lock, held briefly by the readers' {@link #deliver}, the acknowledgements and
 * the stores' {@link #progress}. Cost of an acknowledgement: a hash lookup and a bit; of a progress
 * snapshot, O(tables + ranges + keys acknowledged out of order).
 */
public final class SnapshotAcknowledgements {

  /** The snapshot id of a slot's initial snapshot. */
  public static final String INITIAL = "initial";

  private boolean initialCompleted;
  private PgLsn holdLsn;
  private volatile PgLsn hold;
  private final LinkedHashMap<TableId, Table> tables = new LinkedHashMap<>();
  private final Map<Long, Chunk> chunks = new HashMap<>();

  /**
   * The chunk {@link #chunk} found last, while it is in {@link #chunks}: a handler acknowledges a
   * chunk's rows one after the other, so most lookups need no boxing and no hashing.
   */
  private Chunk recent;

  private long nextChunk = 1;
  private long rowsDelivered;
  private long rowsAcknowledged;
  private long tablesDone;

  /** Rows of the chunks delivered and not settled (their keys are held); guarded by this. */
  private long unsettledRows;

  /**
   * Read rows delivered and not settled after which readers wait ({@link #awaitRoom}): bounds the
   * keys held for acknowledgement (about 100 bytes a row) when a handler acknowledges late.
   */
  public static final long MAX_UNSETTLED_ROWS = 1 << 19;

  // The current run of snapshots: from a start while none was in progress until none is; its
  // figures stay until the next run starts. Guarded by this.
  private boolean runOpen;
  private boolean runResumed;
  private long runRowsBase;
  private long runAckedBase;
  private long runExpected;
  private long runStartedNanos;
  private long runTablesBase;
  private long runChunksBase;
  private long runRowsReadAgain;

  /**
   * @param restored what the stored checkpoint recorded, or {@link SnapshotProgress#NONE}
   */
  public SnapshotAcknowledgements(SnapshotProgress restored) {
    initialCompleted = restored.initialCompleted();
    holdLsn = restored.holdLsn();
    hold = holdLsn;
    for (TableSnapshot t : restored.tables()) {
      Table table = new Table(t.snapshotId(), t.table());
      for (KeyRange r : t.remaining()) {
        table.ranges.add(new Range(table, r.after(), r.through(), r.acknowledged()));
      }
      tables.put(t.table(), table);
    }
    if (!tables.isEmpty()) {
      openRun(true); // resuming: the rate counts from this source's start
    }
  }

  /** One table's snapshot in progress. */
  public static final class Table {
    final String snapshotId;
    final TableId id;
    final List<Range> ranges = new ArrayList<>();

    /**
     * For a table without a key read whole at a position of the stream (after a reset event): that
     * position; else null.
     */
    PgLsn resetAt;

    /** The rows expected ({@code reltuples}), counted into the run's estimate; -1 unknown. */
    long expected = -1;

    /**
     * True once every event of a table read at {@link #resetAt} is acknowledged: it stays in
     * progress until the stream's watermark reaches that position too (else a restart would deliver
     * again, after the table's content, changes that content holds already).
     */
    boolean awaitingStream;

    Table(String snapshotId, TableId id) {
      this.snapshotId = snapshotId;
      this.id = id;
    }

    /** Returns the snapshot the table's rows belong to. */
    public String snapshotId() {
      return snapshotId;
    }

    /** Returns the table. */
    public TableId table() {
      return id;
    }
  }

  /** A key range of a table left to read; its state is guarded by the tracker's lock. */
  public static final class Range {
    final Table table;
    List<String> after;
    final List<String> through;

    /** Keys acknowledged out of order before a restart or reset, as text. */
    final Set<List<String>> acknowledged;

    /** Chunks delivered and not all acknowledged, in delivery order. */
    final ArrayDeque<Chunk> inFlight = new ArrayDeque<>();

    /** Where the next chunk starts (exclusive): after the last chunk delivered; null: the start. */
    List<String> readCursor;

    /** True once the chunk ending the range was delivered. */
    boolean fullyRead;

    Range(Table table, List<String> after, List<String> through, List<List<String>> acked) {
      this.table = table;
      this.after = after;
      this.through = through;
      this.acknowledged = new HashSet<>(acked);
      this.readCursor = after;
    }

    /** Returns the table. */
    public TableId table() {
      return table.id;
    }

    /** Returns the snapshot id. */
    public String snapshotId() {
      return table.snapshotId;
    }
  }

  /** A delivered chunk. */
  private static final class Chunk {
    final long id;
    final Range range;
    final List<String>[] keys;
    final List<String> readThrough;
    final boolean endsRange;
    final List<List<String>> skipped;
    final long[] bits;
    int prefix; // rows [0, prefix) acknowledged
    int acknowledged;

    /** A reset's chunk: its one event is not a row (not counted in the row figures). */
    boolean reset;

    Chunk(
        long id,
        Range range,
        List<String>[] keys,
        List<String> readThrough,
        boolean endsRange,
        List<List<String>> skipped) {
      this.id = id;
      this.skipped = skipped;
      this.range = range;
      this.keys = keys;
      this.readThrough = readThrough;
      this.endsRange = endsRange;
      this.bits = new long[(keys.length + 63) >>> 6];
    }

    boolean complete() {
      return acknowledged == keys.length;
    }

    /** A chunk of a table without a chunk key: its rows are not recorded one by one. */
    boolean keyless() {
      return readThrough == null;
    }
  }

  /**
   * A range to read, as a reader sees it: where to start, where to end, and which keys in it were
   * acknowledged already (to skip).
   *
   * @param range the tracker's handle, passed back to {@link #deliver}
   * @param after exclusive start, or null for the table's first key
   * @param through inclusive end, or null for none
   * @param acknowledged keys in the range already acknowledged; not to be delivered again
   */
  public record ReadTask(
      Range range, List<String> after, List<String> through, Set<List<String>> acknowledged) {}

  /**
   * Starts the initial snapshot: the given tables, each one whole range, and the slot held at the
   * consistent point until all are acknowledged.
   *
   * @param consistentPoint the slot's consistent point
   * @param published the tables to read
   */
  public synchronized void startInitial(PgLsn consistentPoint, List<TableId> published) {
    holdLsn = consistentPoint;
    hold = consistentPoint;
    initialCompleted = false;
    openRun(false);
    for (TableId t : published) {
      tables.computeIfAbsent(t, id -> whole(INITIAL, id));
    }
    completeIfDone();
  }

  /**
   * Adds tables to snapshot while streaming.
   *
   * @param snapshotId the snapshot's id
   * @param requested the tables
   * @return the tables that were in progress already (left as they are)
   */
  public synchronized List<TableId> add(String snapshotId, List<TableId> requested) {
    openRun(false);
    List<TableId> busy = new ArrayList<>();
    for (TableId t : requested) {
      if (tables.containsKey(t)) {
        busy.add(t);
      } else {
        tables.put(t, whole(snapshotId, t));
      }
    }
    return busy;
  }

  private static Table whole(String snapshotId, TableId id) {
    Table table = new Table(snapshotId, id);
    table.ranges.add(new Range(table, null, null, List.of()));
    return table;
  }

  /** Returns true if the store held a completed initial snapshot, or this source completed one. */
  public synchronized boolean initialCompleted() {
    return initialCompleted;
  }

  /**
   * Returns the position the slot is held at (the initial snapshot's consistent point), or null.
   */
  public PgLsn holdLsn() {
    return hold;
  }

  /** Returns true if some table has rows left to read or acknowledge. */
  public synchronized boolean inProgress() {
    return !tables.isEmpty();
  }

  /** Returns the tables in progress, in order. */
  public synchronized List<TableId> tablesInProgress() {
    return List.copyOf(tables.keySet());
  }

  /**
   * Records the rows a table in progress is expected to hold (its {@code reltuples}), for the
   * current run's estimate; once per table, later calls do nothing. A table resumed after a restart
   * counts whole, so the estimate of a resumed run is an upper bound ({@link #figures()}).
   *
   * @param table a table in progress; nothing happens for another
   * @param reltuples the catalog's estimate; below 0 (never analyzed) counts as 0
   */
  public synchronized void estimate(TableId table, double reltuples) {
    Table t = tables.get(table);
    if (t != null && t.expected < 0) {
      t.expected = (long) Math.max(0, reltuples);
      runExpected += t.expected;
    }
  }

  /**
   * Returns this source's snapshot figures, in this order: tables left, tables done, ranges left,
   * chunks delivered, rows delivered, rows acknowledged (those two since this source started), and
   * of the current run of snapshots (from a start while none was in progress until none is; kept
   * until the next starts): rows expected (the tables' estimates; 0 if unknown), nanoseconds since
   * it started (0 if none did), rows delivered, rows acknowledged, 1 if it resumed snapshots a
   * restart interrupted (its estimate counts those tables whole) else 0, rows delivered and given
   * up to be read again (a lost connection, a failed read of a table without a key), tables done,
   * chunks delivered.
   *
   * @return a new array
   */
  public synchronized long[] figures() {
    long ranges = 0;
    for (Table t : tables.values()) {
      ranges += t.ranges.size();
    }
    return new long[] {
      tables.size(),
      tablesDone,
      ranges,
      nextChunk - 1,
      rowsDelivered,
      rowsAcknowledged,
      runExpected,
      runStartedNanos == 0 ? 0 : System.nanoTime() - runStartedNanos,
      rowsDelivered - runRowsBase,
      rowsAcknowledged - runAckedBase,
      runResumed ? 1 : 0,
      runRowsReadAgain,
      tablesDone - runTablesBase,
      nextChunk - 1 - runChunksBase
    };
  }

  /** Opens a run of snapshots unless one is open; {@code resumed} marks it resumed. */
  private void openRun(boolean resumed) {
    if (!runOpen) {
      runOpen = true;
      runResumed = false;
      runRowsBase = rowsDelivered;
      runAckedBase = rowsAcknowledged;
      runExpected = 0;
      runStartedNanos = System.nanoTime();
      runTablesBase = tablesDone;
      runChunksBase = nextChunk - 1;
      runRowsReadAgain = 0;
    }
    runResumed |= resumed;
  }

  /**
   * Returns the ranges with rows left to read, in table order then key order.
   *
   * @return one task per range not fully read, never null
   */
  public synchronized List<ReadTask> readTasks() {
    List<ReadTask> tasks = new ArrayList<>();
    for (Table t : tables.values()) {
      for (Range r : t.ranges) {
        if (!r.fullyRead) {
          tasks.add(new ReadTask(r, r.readCursor, r.through, Set.copyOf(r.acknowledged)));
        }
      }
    }
    return tasks;
  }

  /**
   * Splits a range nothing was read from yet at the given keys (ascending), for parallel readers.
   *
   * @param range a range with no chunk delivered
   * @param bounds inner bounds, ascending, each a key inside the range
   * @return the new ranges' tasks, in key order
   * @throws IllegalStateException if the range had chunks delivered
   */
  public synchronized List<ReadTask> split(Range range, List<List<String>> bounds) {
    if (!range.inFlight.isEmpty() || range.fullyRead || range.readCursor != range.after) {
      throw new IllegalStateException("range of " + range.table.id + " was read from already");
    }
    List<Range> parts = new ArrayList<>();
    List<String> lower = range.after;
    for (List<String> bound : bounds) {
      parts.add(new Range(range.table, lower, bound, List.copyOf(range.acknowledged)));
      lower = bound;
    }
    parts.add(new Range(range.table, lower, range.through, List.copyOf(range.acknowledged)));
    List<Range> ranges = range.table.ranges;
    int at = ranges.indexOf(range);
    ranges.remove(at);
    ranges.addAll(at, parts);
    List<ReadTask> tasks = new ArrayList<>();
    for (Range r : parts) {
      tasks.add(new ReadTask(r, r.after, r.through, Set.copyOf(r.acknowledged)));
    }
    return tasks;
  }

  /**
   * Registers a chunk about to be delivered and moves its range's read cursor past it.
   *
   * @param range the range read
   * @param keys the chunk key of each row to deliver, in order; may be empty (every row read was
   *     superseded or acknowledged before)
   * @param readThrough the last key the chunk read (at or after the last delivered one); null for a
   *     table without a chunk key (its keys are then null too, and its progress is all or nothing:
   *     until its last chunk is acknowledged, its range stays whole)
   * @param endsRange true if no row of the range lies after the chunk
   * @param skipped the keys of rows the chunk read but left out as acknowledged before (from the
   *     task's {@link ReadTask#acknowledged()}); never null
   * @return the chunk's number for the rows' offsets
   */
  public synchronized long deliver(
      Range range,
      List<String>[] keys,
      List<String> readThrough,
      boolean endsRange,
      List<List<String>> skipped) {
    long id = nextChunk++;
    Chunk chunk = new Chunk(id, range, keys, readThrough, endsRange, skipped);
    if (readThrough != null) {
      range.readCursor = readThrough;
    }
    range.fullyRead = endsRange;
    rowsDelivered += keys.length;
    unsettledRows += keys.length;
    range.inFlight.addLast(chunk);
    if (keys.length > 0) {
      chunks.put(id, chunk);
    } else {
      settle(range);
    }
    return id;
  }

  /**
   * Waits while {@link #MAX_UNSETTLED_ROWS} or more read rows are delivered and not settled (an
   * unacknowledged row keeps the chunks after it in its range from settling), so that memory stays
   * bounded when the handler acknowledges late; returns at once otherwise.
   *
   * @param millis the longest wait
   * @return true if there is room now; false if the wait timed out (the caller may say why it
   *     waits, and wait again)
   * @throws InterruptedException if interrupted while waiting
   */
  public synchronized boolean awaitRoom(long millis) throws InterruptedException {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(millis);
    while (unsettledRows >= MAX_UNSETTLED_ROWS) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      wait(Math.max(1, java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(left)));
    }
    return true;
  }

  /** Returns the read rows delivered and not settled, and the oldest such chunk's number (0). */
  public synchronized long[] unsettled() {
    long oldest = 0;
    for (Chunk c : chunks.values()) {
      oldest = oldest == 0 ? c.id : Math.min(oldest, c.id);
    }
    return new long[] {unsettledRows, oldest};
  }

  /**
   * Records the acknowledgement of one read row.
   *
   * @param offset a read row's offset
   * @return true if this call acknowledged it; false if acknowledged before, or if its chunk was
   *     given up (delivered before a reconnect, or its table's read began again or was dropped):
   *     its rows are read again and acknowledged then, like a change delivered again after a
   *     reconnect
   * @throws CdcCheckpointException if the chunk was not delivered by this source or the index is
   *     outside it
   */
  public boolean record(CdcOffset offset) {
    return recordRow(offset) != ROW_NOT_NEW;
  }

  /** {@link #recordRow}: the row was acknowledged before, or its chunk was given up. */
  public static final int ROW_NOT_NEW = 0;

  /** {@link #recordRow}: the row was recorded; rows of its chunk are still unacknowledged. */
  public static final int ROW_RECORDED = 1;

  /** {@link #recordRow}: the row was recorded and was its chunk's last unacknowledged one. */
  public static final int ROW_SETTLED_CHUNK = 2;

  /**
   * Records the acknowledgement of one read row, as {@link #record}, and says in the same lock
   * whether it settled its chunk (what {@link #chunkSettled} would say right after).
   *
   * @param offset a read row's offset
   * @return {@link #ROW_NOT_NEW}, {@link #ROW_RECORDED} or {@link #ROW_SETTLED_CHUNK}
   * @throws CdcCheckpointException as {@link #record}
   */
  public synchronized int recordRow(CdcOffset offset) {
    Chunk chunk = chunk(offset);
    if (chunk == null) {
      return ROW_NOT_NEW;
    }
    int i = offset.eventIndex();
    long bit = 1L << i;
    if ((chunk.bits[i >>> 6] & bit) != 0) {
      return ROW_NOT_NEW;
    }
    chunk.bits[i >>> 6] |= bit;
    chunk.acknowledged++;
    if (!chunk.reset) {
      rowsAcknowledged++;
    }
    while (chunk.prefix < chunk.keys.length
        && (chunk.bits[chunk.prefix >>> 6] & (1L << chunk.prefix)) != 0) {
      chunk.prefix++;
    }
    if (chunk.complete()) {
      drop(chunk);
      settle(chunk.range);
      return ROW_SETTLED_CHUNK;
    }
    return ROW_RECORDED;
  }

  /** Removes a chunk from those awaiting acknowledgements. */
  private void drop(Chunk chunk) {
    chunks.remove(chunk.id);
    if (recent == chunk) {
      recent = null;
    }
  }

  /**
   * Drops a table from its snapshot (it cannot be read: not published, or no key to read it online
   * by); its rows delivered so far stay delivered, nothing more is read.
   *
   * @param table the table
   */
  public synchronized void abandon(TableId table) {
    Table t = tables.remove(table);
    if (t == null) {
      return;
    }
    for (Range r : t.ranges) {
      for (Chunk c : r.inFlight) {
        drop(c);
      }
      forget(r);
    }
    completeIfDone();
  }

  /**
   * Returns whether every range of the range's table was read to its end.
   *
   * @param range a range of the table
   * @return true if no chunk of the table is left to read
   */
  public synchronized boolean fullyRead(Range range) {
    for (Range r : range.table.ranges) {
      if (!r.fullyRead) {
        return false;
      }
    }
    return true;
  }

  /**
   * Returns whether the chunk of a read row's offset is no longer awaiting acknowledgements (every
   * row of it was acknowledged).
   *
   * @param offset a read row's offset
   * @return true if its chunk is complete
   */
  public synchronized boolean chunkSettled(CdcOffset offset) {
    return !chunks.containsKey(offset.snapshotChunk());
  }

  /**
   * Records the acknowledgement of every row of a chunk.
   *
   * @param offset the offset of any row of the chunk
   * @return true if a row was not acknowledged before
   * @throws CdcCheckpointException as {@link #record}
   */
  public synchronized boolean recordChunk(CdcOffset offset) {
    Chunk chunk = chunk(offset);
    if (chunk == null || chunk.complete()) {
      return false;
    }
    if (!chunk.reset) {
      rowsAcknowledged += chunk.keys.length - chunk.acknowledged;
    }
    java.util.Arrays.fill(chunk.bits, -1L);
    chunk.acknowledged = chunk.keys.length;
    chunk.prefix = chunk.keys.length;
    drop(chunk);
    settle(chunk.range);
    return true;
  }

  /**
   * The chunk of a read row's offset; null if this source delivered it and it no longer awaits
   * acknowledgements (all acknowledged, or given up to be read again).
   */
  private Chunk chunk(CdcOffset offset) {
    long id = offset.snapshotChunk();
    Chunk chunk = recent;
    if (chunk == null || chunk.id != id) {
      chunk = chunks.get(id);
      recent = chunk;
    }
    if (chunk == null) {
      if (id >= 1 && id < nextChunk) {
        return null;
      }
      throw new CdcCheckpointException(
          "acknowledged "
              + offset
              + ": no such snapshot chunk was delivered by this source (an offset of another"
              + " process, or made up)");
    }
    if (offset.eventIndex() >= chunk.keys.length || offset.eventCount() != chunk.keys.length) {
      throw new CdcCheckpointException(
          "acknowledged " + offset + ": chunk " + chunk.id + " has " + chunk.keys.length + " rows");
    }
    return chunk;
  }

  /** Moves a range's acknowledged bound over its completed leading chunks; drops finished ones. */
  private void settle(Range range) {
    while (!range.inFlight.isEmpty() && range.inFlight.peekFirst().complete()) {
      Chunk done = range.inFlight.removeFirst();
      unsettledRows -= done.keys.length;
      notifyAll();
      if (!done.keyless()) {
        range.after = done.readThrough;
      }
      range.acknowledged.removeAll(done.skipped); // the bound moved past them
      if (done.endsRange) {
        Table table = range.table;
        if (table.resetAt != null) {
          table.awaitingStream = true; // its one range stays, read, until progress(watermark)
          return;
        }
        table.ranges.remove(range);
        if (table.ranges.isEmpty()) {
          tables.remove(table.id);
          tablesDone++;
          completeIfDone();
        }
        return;
      }
    }
  }

  private void completeIfDone() {
    if (tables.isEmpty()) {
      runOpen = false; // its figures stay until the next run opens
    }
    if (holdLsn == null) {
      return;
    }
    for (Table t : tables.values()) {
      if (t.snapshotId.equals(INITIAL)) {
        return;
      }
    }
    initialCompleted = true;
    holdLsn = null;
    hold = null;
  }

  /**
   * Forgets the chunks delivered but not all acknowledged (the hand-off was dropped at a
   * reconnect), keeping what was acknowledged of them: their ranges are read again from their
   * acknowledged bound, skipping the keys acknowledged out of order.
   */
  public synchronized void resetInFlight() {
    for (Table t : tables.values()) {
      t.resetAt = null; // read again whole, at a new position, after a new reset
      t.awaitingStream = false;
      for (Range r : t.ranges) {
        for (Chunk c : r.inFlight) {
          if (!c.reset) {
            runRowsReadAgain += c.keyless() ? c.keys.length : c.keys.length - c.acknowledged;
          }
        }
        forget(r);
        fold(r);
        r.readCursor = r.after;
        r.fullyRead = false;
      }
    }
    chunks.clear();
    recent = null;
  }

  /** Folds a range's in-flight chunks into its bound and acknowledged keys, and clears them. */
  private static void fold(Range r) {
    boolean contiguous = true;
    for (Chunk c : r.inFlight) {
      if (c.keyless()) {
        break; // all or nothing: read again from the start
      }
      if (contiguous) {
        if (c.prefix > 0) {
          r.after = c.keys[c.prefix - 1];
        }
        contiguous = c.complete();
        if (contiguous) {
          r.after = c.readThrough;
        }
      }
      for (int i = contiguous ? c.keys.length : c.prefix; i < c.keys.length; i++) {
        if ((c.bits[i >>> 6] & (1L << i)) != 0) {
          r.acknowledged.add(c.keys[i]);
        }
      }
    }
    r.inFlight.clear();
  }

  private void forget(Range r) {
    for (Chunk c : r.inFlight) {
      unsettledRows -= c.keys.length;
    }
    notifyAll();
  }

  /**
   * Returns what a checkpoint keeps of the snapshots: everything acknowledged before the call.
   *
   * @return a new progress value
   */
  public synchronized SnapshotProgress progress() {
    return progress(null);
  }

  /**
   * Returns what a checkpoint keeps of the snapshots, given the stream's watermark the checkpoint
   * stores (taken before this call): a table read at a reset whose events are all acknowledged is
   * done, and left out, once that watermark reached its reset position; before, it is kept whole (a
   * restart reads it again).
   *
   * @param streamWatermark the watermark taken before the call, or null to end no such table
   * @return a new progress value
   */
  public synchronized SnapshotProgress progress(PgLsn streamWatermark) {
    if (streamWatermark != null) {
      endPassed(streamWatermark);
    }
    if (tables.isEmpty()) {
      return initialCompleted ? COMPLETED : SnapshotProgress.NONE;
    }
    List<TableSnapshot> out = new ArrayList<>(tables.size());
    for (Table t : tables.values()) {
      List<KeyRange> ranges = new ArrayList<>(t.ranges.size());
      for (Range r : t.ranges) {
        ranges.add(rangeProgress(r));
      }
      out.add(new TableSnapshot(t.snapshotId, t.id, ranges));
    }
    return new SnapshotProgress(initialCompleted, holdLsn, out);
  }

  /** Ends the tables read at a reset, all acknowledged, that the watermark passed. */
  private void endPassed(PgLsn watermark) {
    List<Table> ended = new ArrayList<>();
    for (Table t : tables.values()) {
      if (t.awaitingStream && !t.resetAt.isAfter(watermark)) {
        ended.add(t);
      }
    }
    for (Table t : ended) {
      tables.remove(t.id);
      tablesDone++;
    }
    if (!ended.isEmpty()) {
      completeIfDone();
    }
  }

  /**
   * Registers a table's reset: the table, without a key, is read whole at a position of the stream
   * after an event that tells the consumer to drop what it holds of it. The reset is a chunk of one
   * event of the table's range; the table ends only once every event is acknowledged and the
   * stream's watermark reached {@code at} ({@link #progress(PgLsn)}).
   *
   * @param range the table's range, nothing of it delivered since it was last read from its start
   * @param at the position the table is read at
   * @return the reset's chunk number for its offset
   */
  @SuppressWarnings("unchecked")
  public synchronized long deliverReset(Range range, PgLsn at) {
    range.table.resetAt = at;
    range.table.awaitingStream = false;
    long id = deliver(range, new List[] {null}, null, false, List.of());
    chunks.get(id).reset = true;
    rowsDelivered--;
    return id;
  }

  /**
   * Reads a table at a reset again from its start (its read failed part way): the chunks delivered
   * stay to be acknowledged, and the table is read again whole after a new reset.
   *
   * @param range the table's range
   */
  public synchronized void readAgain(Range range) {
    for (Chunk c : range.inFlight) {
      if (!c.reset) {
        runRowsReadAgain += c.keys.length;
      }
    }
    range.table.resetAt = null;
    range.table.awaitingStream = false;
    range.readCursor = range.after;
    range.fullyRead = false;
  }

  private static final SnapshotProgress COMPLETED = new SnapshotProgress(true, null, List.of());

  private static KeyRange rangeProgress(Range r) {
    List<String> after = r.after;
    List<List<String>> acked = new ArrayList<>();
    boolean contiguous = true;
    for (Chunk c : r.inFlight) {
      if (c.keyless()) {
        break; // all or nothing
      }
      int from;
      if (contiguous) {
        if (c.complete()) {
          after = c.readThrough;
          continue;
        }
        if (c.prefix > 0) {
          after = c.keys[c.prefix - 1];
        }
        contiguous = false;
        from = c.prefix;
      } else {
        from = 0;
      }
      for (int i = from; i < c.keys.length; i++) {
        if ((c.bits[i >>> 6] & (1L << i)) != 0) {
          acked.add(c.keys[i]);
        }
      }
    }
    if (after == r.after && acked.isEmpty() && r.acknowledged.isEmpty()) {
      return new KeyRange(after, r.through, List.of());
    }
    if (!r.acknowledged.isEmpty()) {
      List<List<String>> all = new ArrayList<>(r.acknowledged);
      all.addAll(acked);
      acked = all;
    }
    return new KeyRange(after, r.through, acked);
  }
}
