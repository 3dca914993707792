package io.datum.cdc;

import java.util.Collections;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * A checkpoint store that keeps checkpoints in memory: nothing survives the process. For tests,
 * demos and consumers that always start from the slot's position. URI: {@code memory:}; each {@link
 * CheckpointStores#open} of {@code memory:} returns a new, empty store.
 */
public final class MemoryCheckpointStore implements CdcCheckpointStore {

  private final ConcurrentMap<String, CdcCheckpoint> checkpoints = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /** Creates an empty store. */
  public MemoryCheckpointStore() {}

  /** {@inheritDoc} */
  @Override
  public Optional<CdcCheckpoint> load(String slot) {
    SlotNames.requireValid(slot);
    return Optional.ofNullable(checkpoints.get(slot));
  }

  /**
   * Replaces the slot's checkpoint in memory; "durable" only for the life of this object.
   *
   * @throws IllegalStateException if the store is closed
   */
  @Override
  public void store(CdcCheckpoint checkpoint) {
    if (closed) {
      throw new IllegalStateException("memory checkpoint store is closed");
    }
    checkpoints.put(checkpoint.slot(), checkpoint);
  }

  /** {@inheritDoc} */
  @Override
  public SortedSet<String> slots() {
    return Collections.unmodifiableSortedSet(new TreeSet<>(checkpoints.keySet()));
  }

  /** Returns {@code memory:}. */
  @Override
  public String location() {
    return "memory:";
  }

  /** Marks the store closed; checkpoints remain readable. */
  @Override
  public void close() {
    closed = true;
  }
}
