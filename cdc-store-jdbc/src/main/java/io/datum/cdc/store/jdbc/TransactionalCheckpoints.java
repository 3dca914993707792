package io.datum.cdc.store.jdbc;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.spi.CheckpointCodec;
import io.datum.cdc.store.jdbc.internal.CheckpointUnion;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Exactly-once processing: acknowledgements written to the checkpoint row in the handler's own
 * database transaction, so that the handler's writes and the acknowledgement commit together or not
 * at all. Obtained from {@link JdbcCheckpointStore#transactional()}; give this object to the source
 * as its checkpoint store, and acknowledge through it:
 *
 * <pre>{@code
 * TransactionalCheckpoints checkpoints = JdbcCheckpointStore.builder(dataSource).open().transactional();
 * PgCdcSource source = PgCdcSource.builder()...checkpointStore(checkpoints).build();
 * source.start((event, handle) -> {
 *   try (Connection c = dataSource.getConnection()) {
 *     c.setAutoCommit(false);
 *     writeReadModel(c, event);                      // the handler's own writes
 *     checkpoints.commit(c, handle, event.offset()); // the checkpoint row, then COMMIT
 *   }
 * });
 * }</pre>
 *
 * <p><b>What holds.</b> After a crash at any moment, a restarted source (which {@linkplain #load
 * loads} the row) delivers again exactly the events whose acknowledgement did not commit, and their
 * handler writes did not commit either: every event's effect is in the handler's tables exactly
 * once. A rollback changes nothing, in the row or in the source. The watermark reported to
 * PostgreSQL still moves only over the contiguous prefix of acknowledged transactions: the source
 * learns of an acknowledgement only after its commit succeeded ({@link #commit}, or {@link
 * #committed} after the application's own commit).
 *
 * <p><b>How.</b> The row holds the union of every acknowledgement committed to it. {@link
 * #acknowledgeIn} locks the row in the caller's transaction ({@code SELECT ... FOR UPDATE}), and
 * writes back the union of the row, the source's newest checkpoint and the new acknowledgements;
 * the source's own store writes ({@link #store}) merge the same way under the same row lock, on the
 * store's connection. Acknowledgements only accumulate, so neither kind of write can overwrite a
 * newer one of the other, whichever commits first. The row lock is held until the handler's
 * transaction ends: transactions acknowledging on the same slot commit one after another.
 *
 * <p><b>Source settings.</b> Durability comes from the row, so the source's own store writes only
 * fold committed acknowledgements into the watermark: building it with per-transaction
 * acknowledgement durability ({@code acknowledgementDurability(TRANSACTION)} of {@code
 * PgCdcSource.Builder}) saves a write per event (docs/benchmarks.md, "Transactional checkpoints").
 *
 * <p><b>Requirements and limits.</b> The handler's connection must reach the database and table of
 * the store, and be in a transaction ({@code autoCommit} false). Rows read by a snapshot ({@link
 * CdcOffset#isSnapshotRead()}) cannot be acknowledged this way (their progress is stored by key
 * range, which an offset does not carry): acknowledge them with the source's handle, at least once.
 * An event acknowledged with the source's handle instead of through this class is stored by the
 * source as with any store, but not in the handler's transaction. The row never moves back: to
 * reset a slot, delete its row while no store is open.
 *
 * <p>Thread-safe. Closing it closes the store it came from.
 */
public final class TransactionalCheckpoints implements CdcCheckpointStore {

  private final JdbcCheckpointStore store;

  /** The newest checkpoint the source passed to {@link #store}, per slot. */
  private final Map<String, CdcCheckpoint> latest = new ConcurrentHashMap<>();

  TransactionalCheckpoints(JdbcCheckpointStore store) {
    this.store = store;
  }

  /**
   * Writes the acknowledgement of {@code offsets} to their slots' rows in {@code connection}'s
   * current transaction, locking the rows until it ends. The acknowledgement takes effect when the
   * caller commits; the caller must then call {@link #committed} (or use {@link #commit}, which
   * does both). After a rollback nothing changed.
   *
   * @param connection a connection to the store's database, in a transaction ({@code autoCommit}
   *     false); not committed or closed here
   * @param offsets offsets of events of the replication stream, delivered by the source this object
   *     is the store of; not null, may be empty
   * @throws IllegalStateException if the connection is in auto-commit mode, or the store is closed
   * @throws IllegalArgumentException if an offset is a snapshot read, or its transaction's event
   *     count differs from the stored one
   * @throws CdcStoreException if the row cannot be read, decoded or written (the transaction should
   *     be rolled back)
   */
  public void acknowledgeIn(Connection connection, Collection<CdcOffset> offsets) {
    Objects.requireNonNull(connection, "connection");
    Map<String, List<CdcOffset>> bySlot = new LinkedHashMap<>();
    for (CdcOffset offset : offsets) {
      bySlot.computeIfAbsent(offset.slot(), s -> new ArrayList<>()).add(offset);
    }
    if (bySlot.isEmpty()) {
      return;
    }
    try {
      if (connection.getAutoCommit()) {
        throw new IllegalStateException(
            "acknowledgeIn needs a connection in a transaction (setAutoCommit(false)): in"
                + " auto-commit mode the checkpoint would commit apart from the handler's writes");
      }
      for (Map.Entry<String, List<CdcOffset>> slot : bySlot.entrySet()) {
        String name = slot.getKey();
        store.ensureRowIn(connection, name);
        byte[] row = store.lockRow(connection, name);
        CheckpointUnion union = new CheckpointUnion(name);
        if (row != null) {
          union.add(CheckpointCodec.decode(row, name, store.where()));
        }
        union.add(latest.get(name));
        for (CdcOffset offset : slot.getValue()) {
          union.add(offset);
        }
        store.update(connection, name, CheckpointCodec.encode(union.toCheckpoint()));
      }
    } catch (SQLException e) {
      throw new CdcStoreException(
          "cannot acknowledge " + offsets + " in the transaction, in " + store.where() + ": " + e,
          e);
    }
  }

  /**
   * Writes the acknowledgement of one offset in {@code connection}'s transaction; see {@link
   * #acknowledgeIn(Connection, Collection)}.
   *
   * @param connection a connection in a transaction, to the store's database
   * @param offset the offset of a delivered event of the replication stream
   * @throws IllegalStateException as {@link #acknowledgeIn(Connection, Collection)}
   * @throws IllegalArgumentException as {@link #acknowledgeIn(Connection, Collection)}
   * @throws CdcStoreException as {@link #acknowledgeIn(Connection, Collection)}
   */
  public void acknowledgeIn(Connection connection, CdcOffset offset) {
    acknowledgeIn(connection, List.of(offset));
  }

  /**
   * Tells the source that the acknowledgements of {@code offsets}, written by {@link
   * #acknowledgeIn}, committed: it marks them acknowledged in memory (in the background, without
   * waiting for a store write), so its watermark can move over them. Call only after the commit
   * succeeded; never after a rollback.
   *
   * @param handle the source's handle, as given to the handler
   * @param offsets the offsets whose acknowledgement committed
   * @return a future completed when the source recorded and stored them, or completed exceptionally
   *     as {@link CdcCheckpointHandle#acknowledgeAsync}; the acknowledgements are already durable
   *     in the row either way
   */
  public CompletableFuture<Void> committed(
      CdcCheckpointHandle handle, Collection<CdcOffset> offsets) {
    Objects.requireNonNull(handle, "handle");
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    for (CdcOffset offset : offsets) {
      futures.add(handle.acknowledgeAsync(offset));
    }
    return CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0]));
  }

  /**
   * Acknowledges {@code offsets} in {@code connection}'s transaction, commits it, and then tells
   * the source ({@link #acknowledgeIn}, {@link Connection#commit()}, {@link #committed}).
   *
   * @param connection a connection in a transaction holding the handler's writes
   * @param handle the source's handle, as given to the handler
   * @param offsets the offsets of the events the transaction processed
   * @return as {@link #committed}
   * @throws IllegalStateException as {@link #acknowledgeIn(Connection, Collection)}
   * @throws IllegalArgumentException as {@link #acknowledgeIn(Connection, Collection)}
   * @throws CdcStoreException if writing the row or the commit failed; the transaction was rolled
   *     back where possible and the source was told nothing. If the commit itself failed its
   *     outcome may be unknown (a broken connection): stop the source, a restarted one resumes from
   *     whatever the row holds, consistently with the handler's writes
   */
  public CompletableFuture<Void> commit(
      Connection connection, CdcCheckpointHandle handle, Collection<CdcOffset> offsets) {
    Objects.requireNonNull(handle, "handle");
    try {
      acknowledgeIn(connection, offsets);
      connection.commit();
    } catch (SQLException | RuntimeException e) {
      try {
        connection.rollback();
      } catch (SQLException suppressed) {
        e.addSuppressed(suppressed);
      }
      if (e instanceof RuntimeException r) {
        throw r;
      }
      throw new CdcStoreException(
          "the commit acknowledging " + offsets + " in " + store.where() + " failed: " + e, e);
    }
    return committed(handle, offsets);
  }

  /**
   * {@link #commit(Connection, CdcCheckpointHandle, Collection)} of one offset.
   *
   * @param connection a connection in a transaction holding the handler's writes
   * @param handle the source's handle
   * @param offset the event's offset
   * @return as {@link #committed}
   * @throws IllegalStateException as {@link #acknowledgeIn(Connection, Collection)}
   * @throws IllegalArgumentException as {@link #acknowledgeIn(Connection, Collection)}
   * @throws CdcStoreException as {@link #commit(Connection, CdcCheckpointHandle, Collection)}
   */
  public CompletableFuture<Void> commit(
      Connection connection, CdcCheckpointHandle handle, CdcOffset offset) {
    return commit(connection, handle, List.of(offset));
  }

  /**
   * Loads the slot's row: every acknowledgement committed, transactionally or by the source;
   * creates the row (empty) if it is missing, so that the handlers' transactions only lock and
   * update it.
   *
   * @param slot a valid slot name
   * @return the checkpoint, or empty if none was stored
   * @throws io.datum.cdc.CdcConfigurationException if the slot name is invalid
   * @throws CdcStoreException if the row cannot be read or decoded
   * @throws IllegalStateException if the store is closed
   */
  @Override
  public Optional<CdcCheckpoint> load(String slot) {
    Optional<CdcCheckpoint> loaded = store.load(slot);
    try {
      store.ensureRow(slot); // the source loads at start: later transactions find the row
    } catch (SQLException e) {
      throw new CdcStoreException(
          "cannot create the row of slot \"" + slot + "\" in " + store.where() + ": " + e, e);
    }
    return loaded;
  }

  /**
   * Merges the source's checkpoint into the slot's row (under the row's lock, in a transaction of
   * the store's connection): afterwards the row holds every acknowledgement of the checkpoint and
   * every one it held before, so a row written in a handler's transaction is never overwritten by
   * an older checkpoint of the source. Unlike {@link JdbcCheckpointStore#store}, this never moves a
   * slot back.
   *
   * @param checkpoint the source's checkpoint, not null
   * @throws CdcStoreException if the row cannot be read, decoded or written
   * @throws IllegalStateException if the store is closed
   */
  @Override
  public void store(CdcCheckpoint checkpoint) {
    Objects.requireNonNull(checkpoint, "checkpoint");
    latest.merge(
        checkpoint.slot(),
        checkpoint,
        (old, now) -> now.watermark().compareTo(old.watermark()) >= 0 ? now : old);
    store.merge(checkpoint);
  }

  /**
   * Lists the slots with a stored checkpoint.
   *
   * @return as {@link JdbcCheckpointStore#slots()}
   * @throws CdcStoreException if the table cannot be read
   * @throws IllegalStateException if the store is closed
   */
  @Override
  public SortedSet<String> slots() {
    return store.slots();
  }

  /** Returns the store's table and its database ({@link JdbcCheckpointStore#checkpointTable()}). */
  @Override
  public java.util.Optional<io.datum.cdc.CheckpointTable> checkpointTable() {
    return store.checkpointTable();
  }

  /** Returns the store's location, marked as transactional. */
  @Override
  public String location() {
    return store.location() + " (transactional)";
  }

  /**
   * Closes the store this view came from.
   *
   * @throws CdcStoreException as {@link JdbcCheckpointStore#close()}
   */
  @Override
  public void close() {
    store.close();
  }
}
