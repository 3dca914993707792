package io.datum.cdc;

import java.util.Optional;
import java.util.SortedSet;

/**
 * Durable storage of {@link CdcCheckpoint}s, one per slot, so a source resumes after a restart
 * without losing or repeating acknowledged changes.
 *
 * <p>Contract, checked for every store by the conformance kit in {@code cdc-testkit}:
 *
 * <ul>
 *   <li>When {@link #store} returns normally, the checkpoint is durable as far as the store's
 *       configuration promises (the defaults of the stores shipped with datum-cdc survive a process
 *       crash and a power loss: data and metadata are fsynced). If it throws, a later {@link #load}
 *       returns either the previous checkpoint or the new one, never a mix, and the caller must
 *       treat the new one as not durable.
 *   <li>{@link #load} returns exactly a checkpoint that was stored, never a mix of two or a partial
 *       write; it throws {@link CdcStoreException} naming the location if the stored state is
 *       corrupt or unreadable, never returns empty for it.
 *   <li>Slot names are validated ({@link SlotNames#requireValid}) before they touch storage.
 *   <li>Implementations are safe for concurrent use by several threads.
 * </ul>
 */
public interface CdcCheckpointStore extends AutoCloseable {

  /**
   * Loads the checkpoint of a slot. Allowed after {@link #close()} only where an implementation
   * says so.
   *
   * @param slot a valid slot name
   * @return the last stored checkpoint, or empty if none was ever stored for this slot
   * @throws CdcConfigurationException if the slot name is invalid
   * @throws CdcStoreException if the stored state cannot be read or is corrupt (the message names
   *     the file or location)
   */
  Optional<CdcCheckpoint> load(String slot);

  /**
   * Replaces the checkpoint of {@code checkpoint.slot()}; durable when this method returns.
   *
   * @param checkpoint the checkpoint, not null
   * @throws CdcStoreException if it could not be written durably; a later load returns the previous
   *     checkpoint or this one, never a mix
   * @throws IllegalStateException if the store is closed
   */
  void store(CdcCheckpoint checkpoint);

  /**
   * Lists the slots that have a stored checkpoint, for operators ({@code pgcdc checkpoint show}).
   *
   * @return the slot names, sorted; empty if nothing was stored
   * @throws CdcStoreException if the stored state cannot be read
   * @throws IllegalStateException if the store is closed
   */
  SortedSet<String> slots();

  /**
   * Returns a description of where this store keeps its data, for logs and errors, such as the URI
   * it was opened with.
   *
   * @return a short human-readable location, not null
   */
  String location();

  /**
   * Returns the PostgreSQL table this store writes checkpoints into, when it is one, so that a
   * source decoding the same database leaves that table's changes out ({@link CheckpointTable}).
   * Stores outside PostgreSQL, and stores that cannot tell the database's identity, return empty
   * (the default); a store that wraps another returns the wrapped store's.
   *
   * @return the table and its database, or empty
   */
  default java.util.Optional<CheckpointTable> checkpointTable() {
    return java.util.Optional.empty();
  }

  /**
   * Releases the files, locks and memory the store holds. Idempotent.
   *
   * @throws CdcStoreException if releasing failed
   */
  @Override
  void close();
}
