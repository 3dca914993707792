package io.datum.cdc.kafka.connect;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SnapshotProgress;
import java.util.Collections;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The library's checkpoint store inside a Connect task: it loads the checkpoint from the offsets
 * Connect committed, and keeps in memory what the library stores as acknowledgements arrive ({@code
 * commitRecord}). Nothing here is durable: Connect's offsets are, and the slot is confirmed only up
 * to what they hold (the task's flush limit), never up to what this store was given.
 */
final class ConnectCheckpointStore implements CdcCheckpointStore {

  private final String slot;
  private final CdcCheckpoint loaded;
  private final String location;
  private volatile CdcCheckpoint latest;

  /**
   * @param slot the slot
   * @param loaded the checkpoint Connect's offsets hold, or null if none
   * @param location names the source partition, for messages
   */
  ConnectCheckpointStore(String slot, CdcCheckpoint loaded, String location) {
    this.slot = slot;
    this.loaded = isEmpty(loaded) ? null : loaded;
    this.location = location;
    this.latest = this.loaded;
  }

  private static boolean isEmpty(CdcCheckpoint c) {
    return c == null
        || (c.watermark().isZero()
            && c.acknowledgedBeyond().isEmpty()
            && c.acknowledgedRuns().isEmpty()
            && c.snapshot().equals(SnapshotProgress.NONE));
  }

  @Override
  public Optional<CdcCheckpoint> load(String slot) {
    return this.slot.equals(slot) ? Optional.ofNullable(loaded) : Optional.empty();
  }

  @Override
  public void store(CdcCheckpoint checkpoint) {
    latest = checkpoint;
  }

  /** Returns the newest checkpoint the library stored (or the loaded one), or null if none. */
  CdcCheckpoint latest() {
    return latest;
  }

  /** Returns the newest stored watermark; {@link PgLsn#ZERO} if none. */
  PgLsn latestWatermark() {
    CdcCheckpoint c = latest;
    return c == null ? PgLsn.ZERO : c.watermark();
  }

  @Override
  public SortedSet<String> slots() {
    return latest == null
        ? Collections.emptySortedSet()
        : Collections.unmodifiableSortedSet(new TreeSet<>(java.util.List.of(slot)));
  }

  @Override
  public String location() {
    return location;
  }

  @Override
  public void close() {}
}
