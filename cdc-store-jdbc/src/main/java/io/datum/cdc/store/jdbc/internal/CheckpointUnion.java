package io.datum.cdc.store.jdbc.internal;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.AcknowledgedRun;
import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The union of what checkpoints of one slot say was acknowledged: an event is acknowledged in the
 * union if it is in any of them. Acknowledgements only ever accumulate, so the union of the row a
 * handler's transaction reads and what it adds never loses one committed by another transaction,
 * whichever committed first.
 *
 * <p>Runs are sets of end LSNs (every transaction ending in {@code [first, last]}), so overlapping
 * or adjacent runs merge, a run is clipped to start after the watermark, and a run that then starts
 * right after the watermark ({@code watermark + 1}) moves the watermark to its end. Not
 * thread-safe; one instance per union.
 */
public final class CheckpointUnion {

  private final String slot;
  private long watermark;
  private CdcCheckpoint metadata; // cluster, publication and snapshot progress of the newest input
  private final TreeMap<Long, Long> runs = new TreeMap<>(Long::compareUnsigned);
  private final TreeMap<Long, Partial> partials = new TreeMap<>(Long::compareUnsigned);

  private record Partial(int eventCount, BitSet acknowledged) {}

  /**
   * Starts an empty union.
   *
   * @param slot the slot of every input, a valid slot name
   */
  public CheckpointUnion(String slot) {
    this.slot = slot;
  }

  /**
   * Adds what a checkpoint acknowledges; its cluster identity, publication and snapshot progress
   * replace those of the checkpoints added before it.
   *
   * @param checkpoint a checkpoint of this union's slot, or null (ignored)
   * @return this union
   * @throws IllegalArgumentException if it belongs to another slot, or names a transaction with
   *     another event count than an earlier input
   */
  public CheckpointUnion add(CdcCheckpoint checkpoint) {
    if (checkpoint == null) {
      return this;
    }
    requireSlot(checkpoint.slot());
    metadata = checkpoint;
    watermark = max(watermark, checkpoint.watermark().asLong());
    for (AcknowledgedRun run : checkpoint.acknowledgedRuns()) {
      addRun(run.firstTxEndLsn().asLong(), run.lastTxEndLsn().asLong());
    }
    for (PartialTransaction tx : checkpoint.acknowledgedBeyond()) {
      BitSet bits = new BitSet();
      int[] ranges = tx.acknowledgedRanges();
      for (int i = 0; i < ranges.length; i += 2) {
        bits.set(ranges[i], ranges[i + 1]);
      }
      addPartial(tx.txEndLsn().asLong(), tx.eventCount(), bits);
    }
    return this;
  }

  /**
   * Adds the acknowledgement of one event of the replication stream.
   *
   * @param offset an offset of this union's slot, not a snapshot read
   * @return this union
   * @throws IllegalArgumentException if it belongs to another slot, is a snapshot read, or its
   *     event count differs from an earlier input's for the same transaction
   */
  public CheckpointUnion add(CdcOffset offset) {
    requireSlot(offset.slot());
    if (offset.isSnapshotRead()) {
      throw new IllegalArgumentException(
          "a snapshot read ("
              + offset
              + ") cannot be acknowledged in a transaction: acknowledge it with the source's"
              + " CdcCheckpointHandle");
    }
    BitSet bit = new BitSet();
    bit.set(offset.eventIndex());
    addPartial(offset.txEndLsn().asLong(), offset.eventCount(), bit);
    return this;
  }

  /**
   * Returns the union as one checkpoint, with the metadata of the last checkpoint added.
   *
   * @return the checkpoint; at watermark {@code 0/0} with nothing acknowledged if nothing was added
   */
  public CdcCheckpoint toCheckpoint() {
    normalize();
    List<AcknowledgedRun> runList = new ArrayList<>();
    for (Map.Entry<Long, Long> run : runs.entrySet()) {
      runList.add(new AcknowledgedRun(PgLsn.of(run.getKey()), PgLsn.of(run.getValue())));
    }
    List<PartialTransaction> partialList = new ArrayList<>();
    for (Map.Entry<Long, Partial> tx : partials.entrySet()) {
      BitSet bits = tx.getValue().acknowledged();
      int[] ranges = new int[2 * bits.cardinality()];
      int n = 0;
      for (int from = bits.nextSetBit(0); from >= 0; ) {
        int to = bits.nextClearBit(from);
        ranges[n++] = from;
        ranges[n++] = to;
        from = bits.nextSetBit(to);
      }
      partialList.add(
          PartialTransaction.ofRanges(
              PgLsn.of(tx.getKey()),
              tx.getValue().eventCount(),
              java.util.Arrays.copyOf(ranges, n)));
    }
    CdcCheckpoint m = metadata;
    return new CdcCheckpoint(
        slot,
        PgLsn.of(watermark),
        partialList,
        runList,
        m == null ? null : m.cluster(),
        m == null ? null : m.publication(),
        m == null ? null : m.snapshot());
  }

  private void addRun(long first, long last) {
    Long end = runs.get(first);
    runs.put(first, end == null ? last : max(end, last));
  }

  private void addPartial(long end, int eventCount, BitSet bits) {
    Partial known = partials.get(end);
    if (known == null) {
      partials.put(end, new Partial(eventCount, bits));
      return;
    }
    if (known.eventCount() != eventCount) {
      throw new IllegalArgumentException(
          "transaction at "
              + PgLsn.of(end)
              + " has "
              + eventCount
              + " events here but "
              + known.eventCount()
              + " in the stored checkpoint of slot "
              + slot);
    }
    known.acknowledged().or(bits);
  }

  /** Full partials to runs; clip, merge and fold runs; drop what the watermark or a run covers. */
  private void normalize() {
    for (var it = partials.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<Long, Partial> tx = it.next();
      Partial p = tx.getValue();
      if (p.acknowledged().cardinality() >= p.eventCount()) {
        addRun(tx.getKey(), tx.getKey());
        it.remove();
      }
    }
    TreeMap<Long, Long> merged = new TreeMap<>(Long::compareUnsigned);
    long curFirst = 0;
    long curLast = 0;
    boolean open = false;
    for (Map.Entry<Long, Long> run : runs.entrySet()) {
      long first = run.getKey();
      long last = run.getValue();
      if (Long.compareUnsigned(last, watermark) <= 0) {
        continue; // behind the watermark
      }
      if (Long.compareUnsigned(first, watermark) <= 0) {
        first = watermark + 1; // clipped: the transactions after the watermark up to last
      }
      if (open && Long.compareUnsigned(first, curLast + 1) <= 0 && curLast != -1L) {
        curLast = max(curLast, last); // overlapping or adjacent sets of end LSNs
        continue;
      }
      if (open) {
        merged.put(curFirst, curLast);
      }
      curFirst = first;
      curLast = last;
      open = true;
    }
    if (open) {
      merged.put(curFirst, curLast);
    }
    runs.clear();
    for (Map.Entry<Long, Long> run : merged.entrySet()) {
      if (run.getKey() == watermark + 1 && watermark != -1L) {
        watermark = run.getValue(); // every transaction up to the run's end is acknowledged
      } else {
        runs.put(run.getKey(), run.getValue());
      }
    }
    partials.headMap(watermark, true).clear();
    for (var it = partials.keySet().iterator(); it.hasNext(); ) {
      long end = it.next();
      Map.Entry<Long, Long> run = runs.floorEntry(end);
      if (run != null && Long.compareUnsigned(end, run.getValue()) <= 0) {
        it.remove();
      }
    }
  }

  private void requireSlot(String other) {
    if (!slot.equals(other)) {
      throw new IllegalArgumentException(
          "an acknowledgement of slot \"" + other + "\" cannot join slot \"" + slot + "\"");
    }
  }

  private static long max(long a, long b) {
    return Long.compareUnsigned(a, b) >= 0 ? a : b;
  }
}
