package io.datum.cdc.event;

import io.datum.cdc.PgLsn;
import java.util.Objects;

/**
 * Which snapshot and which chunk of it a {@link ReadEvent} came from.
 *
 * @param id the snapshot's name: {@code initial} for the initial snapshot of a slot, {@code
 *     request-<LSN>} for one asked for while streaming (the LSN of the request), not null
 * @param chunk the chunk's number, equal to the row's {@link
 *     io.datum.cdc.CdcOffset#snapshotChunk()}: positive, unique within the running source, in the
 *     order chunks were delivered (a chunk read again after a restart gets a new number)
 * @param consistentWith the LSN the row's value is consistent with: every change committed before
 *     it is in the value, none after it (for the initial snapshot the slot's consistent point; for
 *     an online chunk the position in the stream where its rows were delivered), not null
 * @param lastOfTable true for the last row of the last chunk of the table's snapshot
 */
public record SnapshotInfo(String id, long chunk, PgLsn consistentWith, boolean lastOfTable) {

  /**
   * @throws NullPointerException if {@code id} or {@code consistentWith} is null
   * @throws IllegalArgumentException if {@code chunk < 1}
   */
  public SnapshotInfo {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(consistentWith, "consistentWith");
    if (chunk < 1) {
      throw new IllegalArgumentException("chunk must be at least 1, was " + chunk);
    }
  }
}
